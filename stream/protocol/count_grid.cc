#include "stream/protocol/count_grid.h"

#include <cassert>
#include <cmath>

namespace momenta {

CountGrid::CountGrid(double h) : h_(h), L_(static_cast<uint64_t>(std::ceil(4 / h))), log_step_(std::log1p(h / 4)) {
  assert(h > 0 && h < 1);
}

uint64_t CountGrid::Value(uint64_t level) const {
  if (level <= L_) return level;
  const double v = std::ceil(static_cast<double>(L_) * std::exp(static_cast<double>(level - L_) * log_step_));
  return v >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(v);
}

uint64_t CountGrid::LevelAtOrBelow(double x) const {
  assert(x >= 0);
  if (x < static_cast<double>(L_)) return static_cast<uint64_t>(std::floor(x));
  uint64_t i = L_ + static_cast<uint64_t>(std::floor(std::log(x / static_cast<double>(L_)) / log_step_));
  while (static_cast<double>(Value(i + 1)) <= x) ++i;
  while (i > L_ && static_cast<double>(Value(i)) > x) --i;
  return i;
}

uint64_t CountGrid::LevelAtOrAbove(double x) const {
  assert(x >= 0);
  if (x <= static_cast<double>(L_)) return static_cast<uint64_t>(std::ceil(x));
  uint64_t i = LevelAtOrBelow(x);
  if (static_cast<double>(Value(i)) < x) ++i;
  return i;
}

}  // namespace momenta
