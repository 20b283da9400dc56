// IndexSet: a set of u64 keys (element indices, page numbers) for the update
// path's duplicate checks, where std::unordered_set's node per key cost more
// than the update itself. Open addressing with linear probing, at most half
// full (it doubles when it would pass that); UINT64_MAX is not a key.
// clear() keeps the capacity (O(capacity)), so a set reused per chunk does not
// allocate. Not thread-safe.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

namespace momenta {

class IndexSet {
 public:
  explicit IndexSet(size_t expected = 16) { Rehash(CapacityFor(expected)); }

  // Adds `key`; true when it was not there. REQUIRES: key != UINT64_MAX
  bool insert(uint64_t key) {
    assert(key != kEmpty);
    if (2 * (size_ + 1) > slots_.size()) Rehash(2 * slots_.size());
    for (size_t at = Hash(key);; at = (at + 1) & mask_) {
      if (slots_[at] == key) return false;
      if (slots_[at] == kEmpty) {
        slots_[at] = key;
        ++size_;
        return true;
      }
    }
  }
  void clear() {
    std::fill(slots_.begin(), slots_.end(), kEmpty);
    size_ = 0;
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  static size_t CapacityFor(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  // Fibonacci hashing: the top bits of key * 2^64/φ.
  size_t Hash(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void Rehash(size_t capacity) {
    std::vector<uint64_t> old(capacity, kEmpty);
    old.swap(slots_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    size_ = 0;
    for (const uint64_t key : old)
      if (key != kEmpty) insert(key);
  }

  std::vector<uint64_t> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace momenta
