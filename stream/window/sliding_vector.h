// SlidingVector<T>: a contiguous sequence that grows at the back and shrinks
// at the front, the shape of a window's bucket lists (bucket_window.h).
//
// Why not std::deque: a deque of window buckets (72-100 bytes) fits six to a
// 512-byte block, so one item per tick allocated and freed a block every few
// ticks, and indexing paid a division. Here the elements live in one vector
// at [head_, size): pop_front only moves head_, and the dead prefix is
// dropped (the live elements moved down, O(live)) once it is at least as
// long as the live part and 64 elements, so every operation is amortized
// O(1) but a middle insert. Iterators are pointers; any insert, push_back or
// pop_front may invalidate them and references (as with std::vector).
// Not thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace momenta {

template <class T>
class SlidingVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  size_t size() const { return items_.size() - head_; }
  bool empty() const { return size() == 0; }

  T& operator[](size_t i) {
    assert(i < size());
    return items_[head_ + i];
  }
  const T& operator[](size_t i) const {
    assert(i < size());
    return items_[head_ + i];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return items_.back(); }
  const T& back() const { return items_.back(); }

  iterator begin() { return items_.data() + head_; }
  iterator end() { return items_.data() + items_.size(); }
  const_iterator begin() const { return items_.data() + head_; }
  const_iterator end() const { return items_.data() + items_.size(); }

  void push_back(T&& x) { items_.push_back(std::move(x)); }
  T& emplace_back() { return items_.emplace_back(); }
  // Inserts a default T before pos; returns it.
  iterator emplace(iterator pos) {
    const size_t at = static_cast<size_t>(pos - items_.data());
    return &*items_.emplace(items_.begin() + static_cast<ptrdiff_t>(at));
  }
  void pop_front() {
    assert(!empty());
    items_[head_] = T();  // release what it holds now, not at the next trim
    ++head_;
    if (head_ >= kMinTrim && head_ >= size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  // Removes [pos, end()).
  void erase_to_end(iterator pos) {
    items_.erase(items_.begin() + static_cast<ptrdiff_t>(pos - items_.data()), items_.end());
  }

 private:
  static constexpr size_t kMinTrim = 64;
  std::vector<T> items_;
  size_t head_ = 0;  // items_[0, head_) are popped
};

}  // namespace momenta
