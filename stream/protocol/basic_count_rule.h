// Basic counting, site side: up and down events on the count grid (Chan, Lam,
// Lee & Ting; stream/REFERENCE.md §2.2; thresholds [R], proved by the stream tests).
//
// With target eps_b the site keeps its window count with relative error
// eps_b/3 (a WindowCount, owned by the caller) and reports on a CountGrid with
// hysteresis h = eps_b/3. After each tick, with x the local estimate and r the
// last reported value:
//   x > (1+h) r  -> up:   level = max{i : g(i) <= x}
//   x < r/(1+h)  -> down: level = min{i : g(i) >= x}   (also fires at x = 0)
// and the message carries only the signed level delta. Between events
// |r - x| <= h x; right after one, |r - x| <= (h/2) x; so
// |r - c| <= h(1 + eps_b/3) c + (eps_b/3) c <= eps_b c, and r = 0 exactly when
// the window is empty. The root sums the sites' r.
#pragma once

#include <cstdint>

#include "stream/protocol/count_grid.h"

namespace momenta {

class BasicCountSite {
 public:
  // REQUIRES: 0 < eps_b < 1
  explicit BasicCountSite(double eps_b) : grid_(eps_b / 3) {}

  // The count synopsis's error this rule assumes (eps_b / 3).
  double synopsis_eps() const { return grid_.h(); }
  // Feeds this tick's local estimate; returns the level delta to send (0: none).
  int64_t Observe(double x);

  uint64_t level() const { return level_; }
  double reported() const { return static_cast<double>(grid_.Value(level_)); }
  const CountGrid& grid() const { return grid_; }

 private:
  CountGrid grid_;
  uint64_t level_ = 0;  // the root holds grid_.Value(level_)
};

}  // namespace momenta
