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

// The open-addressing shape IndexSet and IndexMap share: a power-of-two
// table at most half full, Fibonacci hashing (the top bits of
// key * 2^64/φ), UINT64_MAX marking an empty slot.
struct OpenTable {
  static constexpr uint64_t kEmpty = UINT64_MAX;
  static size_t CapacityFor(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
  }
  void Size(size_t capacity) {
    mask = capacity - 1;
    shift = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift;
  }
  size_t Hash(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift); }
  size_t mask = 0;
  int shift = 64;
};

class IndexSet {
 public:
  explicit IndexSet(size_t expected = 16) { Rehash(OpenTable::CapacityFor(expected)); }

  // Adds `key`; true when it was not there. REQUIRES: key != UINT64_MAX
  bool insert(uint64_t key) {
    assert(key != kEmpty);
    if (2 * (size_ + 1) > slots_.size()) Rehash(2 * slots_.size());
    for (size_t at = table_.Hash(key);; at = (at + 1) & table_.mask) {
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
  static constexpr uint64_t kEmpty = OpenTable::kEmpty;
  void Rehash(size_t capacity) {
    std::vector<uint64_t> old(capacity, kEmpty);
    old.swap(slots_);
    table_.Size(capacity);
    size_ = 0;
    for (const uint64_t key : old)
      if (key != kEmpty) insert(key);
  }

  std::vector<uint64_t> slots_;
  OpenTable table_;
  size_t size_ = 0;
};

// IndexMap: u64 keys to u32 values, the same open addressing, for grouping
// a chunk's changes by node. clear() forgets only the keys inserted since the
// last clear (O(size), not O(capacity)): a map reused per chunk costs what the
// chunk put in it. UINT64_MAX is not a key. Not thread-safe.
class IndexMap {
 public:
  explicit IndexMap(size_t expected = 16) { Rehash(OpenTable::CapacityFor(expected)); }

  // The value of `key`, inserting `value` for it when it is not there.
  // REQUIRES: key != UINT64_MAX
  uint32_t FindOrInsert(uint64_t key, uint32_t value) {
    assert(key != kEmpty);
    if (2 * (used_.size() + 1) > keys_.size()) Rehash(2 * keys_.size());
    for (size_t at = table_.Hash(key);; at = (at + 1) & table_.mask) {
      if (keys_[at] == key) return values_[at];
      if (keys_[at] == kEmpty) {
        keys_[at] = key;
        values_[at] = value;
        used_.push_back(at);
        return value;
      }
    }
  }
  void clear() {
    for (const size_t at : used_) keys_[at] = kEmpty;
    used_.clear();
  }
  size_t size() const { return used_.size(); }

 private:
  static constexpr uint64_t kEmpty = OpenTable::kEmpty;
  void Rehash(size_t capacity) {
    std::vector<uint64_t> old_keys(capacity, kEmpty);
    std::vector<uint32_t> old_values(capacity, 0);
    old_keys.swap(keys_);
    old_values.swap(values_);
    table_.Size(capacity);
    used_.clear();
    for (size_t k = 0; k < old_keys.size(); ++k)
      if (old_keys[k] != kEmpty) FindOrInsert(old_keys[k], old_values[k]);
  }

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> values_;
  std::vector<size_t> used_;  // slots holding a key
  OpenTable table_;
};

}  // namespace momenta
