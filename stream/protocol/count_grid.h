// CountGrid: the value grid basic counting reports on, shared by site and
// root so that a level index stands for a count (stream/REFERENCE.md §2.2, [R]).
//
//   g(i) = i                          for i <= L = ceil(4/h)
//   g(i) = ceil(L * (1 + h/4)^(i-L))  above
//
// Above L consecutive values differ by at least 1 (L*h/4 >= 1), so g is
// strictly increasing, and g(i+1) <= (1 + h/2) g(i): a report on the grid
// is within a factor (1 + h/2) of the count it rounds. Computed in closed
// form (no table), so a grid costs no memory.
#pragma once

#include <cstdint>

namespace momenta {

class CountGrid {
 public:
  // REQUIRES: 0 < h < 1
  explicit CountGrid(double h);

  double h() const { return h_; }
  uint64_t L() const { return L_; }
  uint64_t Value(uint64_t level) const;
  // max{i : g(i) <= x} and min{i : g(i) >= x}. REQUIRES: x >= 0
  uint64_t LevelAtOrBelow(double x) const;
  uint64_t LevelAtOrAbove(double x) const;

 private:
  double h_;
  uint64_t L_;
  double log_step_;  // log(1 + h/4)
};

}  // namespace momenta
