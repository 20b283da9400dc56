// PackedPairs: an immutable list of (key, count) pairs, keys strictly
// ascending, counts >= 1, bit-packed: the in-memory form of a settled
// bucket's payload (item counts: item -> count; quantiles: value -> weight).
//
// Every pair takes the same number of bits: key - first key in as many bits
// as the largest such offset needs, count - 1 in as many as the largest
// count needs. So a pair costs at most 64 + 31 bits (never more than the
// 12-byte unpacked entry), and typically far less: 2^20 distinct ids and
// counts below 2^12 take 4 bytes a pair. Lists of up to 128 bits live inline
// (a bucket of one item and count 1 takes no bits at all), longer ones in one
// heap block of exactly their size. Access by index is O(1), Find is a binary
// search. Copy is deleted; moves are cheap. Not thread-safe.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace momenta {

class PackedPairs {
 public:
  PackedPairs() = default;
  PackedPairs(PackedPairs&& o) noexcept { *this = std::move(o); }
  PackedPairs& operator=(PackedPairs&& o) noexcept {
    if (this != &o) {
      Free();
      base_ = o.base_;
      size_ = o.size_;
      key_bits_ = o.key_bits_;
      count_bits_ = o.count_bits_;
      heap_ = o.heap_;
      if (heap_) {
        data_ = o.data_;
      } else {
        inline_[0] = o.inline_[0];
        inline_[1] = o.inline_[1];
      }
      o.size_ = 0;
      o.heap_ = false;
    }
    return *this;
  }
  PackedPairs(const PackedPairs&) = delete;
  PackedPairs& operator=(const PackedPairs&) = delete;
  ~PackedPairs() { Free(); }

  // Packs n pairs read through key(i) and count(i).
  // REQUIRES: keys strictly ascending, 1 <= count(i) < 2^32, n < 2^32
  template <class Key, class Count>
  static PackedPairs Pack(size_t n, Key&& key, Count&& count) {
    PackedPairs p;
    if (n == 0) return p;
    assert(n < (uint64_t{1} << 32));
    p.size_ = static_cast<uint32_t>(n);
    p.base_ = key(0);
    uint64_t max_count = 0;
    for (size_t i = 0; i < n; ++i) {
      assert(count(i) >= 1 && (i == 0 || key(i) > key(i - 1)));
      max_count = std::max<uint64_t>(max_count, count(i) - 1);
    }
    p.key_bits_ = static_cast<uint8_t>(Width(static_cast<uint64_t>(key(n - 1)) - static_cast<uint64_t>(p.base_)));
    p.count_bits_ = static_cast<uint8_t>(Width(max_count));
    const size_t words = p.Words();
    uint64_t* d = p.inline_;
    if (words > kInlineWords) {
      d = new uint64_t[words]();
      p.data_ = d;
      p.heap_ = true;
    } else {
      p.inline_[0] = p.inline_[1] = 0;
    }
    const unsigned per = p.key_bits_ + p.count_bits_;
    if (per <= 64) {  // the usual case: one field a pair
      for (size_t i = 0; i < n; ++i)
        Put(d, i * per, per,
            (static_cast<uint64_t>(key(i)) - static_cast<uint64_t>(p.base_)) |
                (p.count_bits_ ? (static_cast<uint64_t>(count(i)) - 1) << p.key_bits_ : 0));
    } else {
      for (size_t i = 0; i < n; ++i) {
        const size_t at = i * per;
        Put(d, at, p.key_bits_, static_cast<uint64_t>(key(i)) - static_cast<uint64_t>(p.base_));
        Put(d, at + p.key_bits_, p.count_bits_, static_cast<uint64_t>(count(i)) - 1);
      }
    }
    return p;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // REQUIRES: i < size()
  int64_t key(size_t i) const {
    assert(i < size_);
    return static_cast<int64_t>(static_cast<uint64_t>(base_) + Get(data(), i * (key_bits_ + count_bits_), key_bits_));
  }
  uint32_t count(size_t i) const {
    assert(i < size_);
    return static_cast<uint32_t>(Get(data(), i * (key_bits_ + count_bits_) + key_bits_, count_bits_) + 1);
  }
  // The count stored for key (0 when absent).
  uint32_t Find(int64_t k) const {
    size_t lo = 0, hi = size_;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (key(mid) < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < size_ && key(lo) == k ? count(lo) : 0;
  }
  // f(key, count) for every pair, keys ascending.
  template <class F>
  void ForEach(F&& f) const {
    const uint64_t* d = data();
    const unsigned per = key_bits_ + count_bits_;
    if (per <= 64) {  // one field a pair
      const uint64_t key_mask = key_bits_ == 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits_) - 1;
      for (size_t i = 0, at = 0; i < size_; ++i, at += per) {
        const uint64_t v = Get(d, at, per);
        f(static_cast<int64_t>(static_cast<uint64_t>(base_) + (v & key_mask)),
          static_cast<uint32_t>((key_bits_ == 64 ? 0 : v >> key_bits_) + 1));
      }
      return;
    }
    for (size_t i = 0, at = 0; i < size_; ++i, at += per)
      f(static_cast<int64_t>(static_cast<uint64_t>(base_) + Get(d, at, key_bits_)),
        static_cast<uint32_t>(Get(d, at + key_bits_, count_bits_) + 1));
  }
  // Heap bytes held (0 when inline).
  size_t HeapBytes() const { return heap_ ? Words() * sizeof(uint64_t) : 0; }

 private:
  static constexpr size_t kInlineWords = 2;
  static unsigned Width(uint64_t v) { return v == 0 ? 0 : 64 - static_cast<unsigned>(__builtin_clzll(v)); }
  size_t Words() const { return (static_cast<size_t>(size_) * (key_bits_ + count_bits_) + 63) / 64; }
  const uint64_t* data() const { return heap_ ? data_ : inline_; }
  // w bits at bit offset `at` (w <= 64); a field reads the next word only
  // when it reaches into it.
  static uint64_t Get(const uint64_t* d, size_t at, unsigned w) {
    if (w == 0) return 0;
    const size_t i = at >> 6;
    const unsigned s = at & 63;
    uint64_t v = d[i] >> s;
    if (s + w > 64) v |= d[i + 1] << (64 - s);
    return w == 64 ? v : v & ((uint64_t{1} << w) - 1);
  }
  static void Put(uint64_t* d, size_t at, unsigned w, uint64_t v) {
    if (w == 0) return;
    const size_t i = at >> 6;
    const unsigned s = at & 63;
    d[i] |= v << s;
    if (s + w > 64) d[i + 1] |= v >> (64 - s);
  }
  void Free() {
    if (heap_) delete[] data_;
    heap_ = false;
  }

  int64_t base_ = 0;        // the first key
  uint32_t size_ = 0;       // pairs
  uint8_t key_bits_ = 0;    // bits of key - base_
  uint8_t count_bits_ = 0;  // bits of count - 1
  bool heap_ = false;       // data_ is a heap block (else inline_ holds the bits)
  union {
    uint64_t inline_[kInlineWords] = {0, 0};
    uint64_t* data_;
  };
};
static_assert(sizeof(PackedPairs) == 32);

}  // namespace momenta
