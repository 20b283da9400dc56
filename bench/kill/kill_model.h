// The update stream of the kill driver and its exact model.
//
// Update number u (1, 2, 3, ...) sets element Index(u) to the value u. Half
// of the updates go to a hot range of kHotLength elements, half anywhere
// (scattered), chosen by a hash of (stream seed, u): the stream is a pure
// function of u, so the driver knows every update a writer could have made
// without being told. Values are distinct and grow, so every update changes
// its element (and gets exactly one log record), the last applied update is
// the array's maximum, and under a process kill the log's sequence s holds
// update s (the driver checks this too).
#pragma once

#include <cstdint>
#include <vector>

namespace momenta::kill {

constexpr uint64_t kLength = uint64_t{1} << 16;  // i8 elements: 512 KiB
constexpr uint64_t kHotLength = 256;

class UpdateStream {
 public:
  explicit UpdateStream(uint64_t seed);
  uint64_t Index(uint64_t u) const;
  uint64_t hot_first() const { return hot_first_; }

 private:
  uint64_t seed_;
  uint64_t hot_first_;
};

// The array after updates 1..prefix(), over zeros, with exact range sums.
class Model {
 public:
  explicit Model(const UpdateStream& stream);
  uint64_t prefix() const { return prefix_; }
  // Applies updates prefix()+1 .. u. REQUIRES: u >= prefix()
  void AdvanceTo(uint64_t u);
  int64_t at(uint64_t i) const { return values_[i]; }
  // Σ a_i over [p, q). REQUIRES: p <= q <= kLength
  int64_t Sum(uint64_t p, uint64_t q) const;

 private:
  void Add(uint64_t i, int64_t delta);
  int64_t PrefixSum(uint64_t n) const;  // Σ a_i over [0, n)

  const UpdateStream& stream_;
  uint64_t prefix_ = 0;
  std::vector<int64_t> values_;
  std::vector<int64_t> fenwick_;  // 1-based
};

}  // namespace momenta::kill
