// FlatCountMap: item -> count, open addressing with linear probing, for the
// hot paths of the item synopses (one probe sequence per arrival, no node
// allocation). Any int64 is a valid key. Erase shifts later entries back, so
// there are no tombstones. Iteration order is unspecified and changes on
// rehash. A map that holds one key (a bucket of one arrival: one item per
// tick) iterates and resets in O(1); otherwise both are O(capacity).
// Not thread-safe.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

namespace momenta {

class FlatCountMap {
 public:
  FlatCountMap() = default;
  FlatCountMap(FlatCountMap&&) noexcept = default;
  FlatCountMap& operator=(FlatCountMap&&) noexcept = default;
  FlatCountMap(const FlatCountMap&) = delete;
  FlatCountMap& operator=(const FlatCountMap&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes held by the table.
  size_t MemoryBytes() const { return capacity_ * sizeof(Slot); }

  // count[key] += delta; returns the new count. REQUIRES: delta > 0
  uint64_t Add(int64_t key, uint64_t delta) {
    assert(delta > 0);
    if ((size_ + 1) * 4 > capacity_ * 3) Grow();  // load <= 3/4: short probe runs
    size_t i = Home(key);
    while (slots_[i].used()) {
      if (slots_[i].key == key) return slots_[i].count += delta;
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{key, delta};
    only_ = size_ == 0 ? i : kNone;
    ++size_;
    return delta;
  }

  // count[key] -= delta, erasing the key at zero. REQUIRES: count[key] >= delta
  void Subtract(int64_t key, uint64_t delta) {
    size_t i = Find(key);
    assert(i != kNone && slots_[i].count >= delta);
    slots_[i].count -= delta;
    if (slots_[i].count == 0) EraseSlot(i);
  }

  // Starts loading key's home slot into cache (a hint; no effect on
  // contents). Unconditional: an empty map prefetches null + 0, which never
  // faults (GCC 12 drops a prefetch under a condition).
  void Prefetch(int64_t key) const { __builtin_prefetch(slots_.get() + Home(key)); }

  // 0 when absent.
  uint64_t Get(int64_t key) const {
    size_t i = Find(key);
    return i == kNone ? 0 : slots_[i].count;
  }

  void Clear() {
    slots_.reset();
    capacity_ = mask_ = size_ = 0;
    only_ = kNone;
  }
  // Empties the map but keeps its table (for reuse at the same scale).
  void Reset() {
    if (only_ != kNone) {
      slots_[only_].count = 0;
    } else if (size_ > 0) {
      for (size_t i = 0; i < capacity_; ++i) slots_[i].count = 0;
    }
    size_ = 0;
    only_ = kNone;
  }

  // f(key, count) for every entry.
  template <class F>
  void ForEach(F&& f) const {
    if (only_ != kNone) {
      f(slots_[only_].key, slots_[only_].count);
      return;
    }
    if (size_ == 0) return;
    for (size_t i = 0; i < capacity_; ++i)
      if (slots_[i].used()) f(slots_[i].key, slots_[i].count);
  }

 private:
  struct Slot {
    int64_t key;
    uint64_t count;  // 0 = empty slot (stored counts are never 0)
    bool used() const { return count != 0; }
  };
  static constexpr size_t kNone = ~size_t{0};

  size_t Home(int64_t key) const {
    uint64_t h = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 29)) & mask_;
  }
  size_t Find(int64_t key) const {
    if (capacity_ == 0) return kNone;
    size_t i = Home(key);
    while (slots_[i].used()) {
      if (slots_[i].key == key) return i;
      i = (i + 1) & mask_;
    }
    return kNone;
  }
  void EraseSlot(size_t i) {
    only_ = kNone;
    // Backward-shift deletion: move later members of the probe run into the hole.
    size_t hole = i;
    size_t j = (i + 1) & mask_;
    while (slots_[j].used()) {
      size_t home = Home(slots_[j].key);
      // Move j into the hole when its home is not cyclically in (hole, j].
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
      j = (j + 1) & mask_;
    }
    slots_[hole].count = 0;
    --size_;
  }
  void Grow() {
    size_t cap = capacity_ ? capacity_ * 2 : 8;
    std::unique_ptr<Slot[]> old = std::move(slots_);
    size_t old_cap = capacity_;
    slots_.reset(new Slot[cap]);
    for (size_t i = 0; i < cap; ++i) slots_[i].count = 0;
    capacity_ = cap;
    mask_ = cap - 1;
    size_ = 0;
    only_ = kNone;
    for (size_t i = 0; i < old_cap; ++i)
      if (old[i].used()) {
        size_t k = Home(old[i].key);
        while (slots_[k].used()) k = (k + 1) & mask_;
        slots_[k] = old[i];
        ++size_;
      }
  }

  std::unique_ptr<Slot[]> slots_;
  size_t capacity_ = 0;  // 0 or a power of two
  size_t mask_ = 0;
  size_t size_ = 0;
  // The slot of the only key, when the map went from empty to one key by Add
  // and has not changed size since (kNone otherwise: iterate the table).
  size_t only_ = kNone;
};

}  // namespace momenta
