#include "stream/protocol/basic_count_rule.h"

namespace momenta {

int64_t BasicCountSite::Observe(double x) {
  const double r = reported(), h = grid_.h();
  uint64_t next = level_;
  if (x > (1 + h) * r) {
    next = grid_.LevelAtOrBelow(x);
  } else if (x < r / (1 + h)) {
    next = grid_.LevelAtOrAbove(x);
  }
  const int64_t delta = static_cast<int64_t>(next) - static_cast<int64_t>(level_);
  level_ = next;
  return delta;
}

}  // namespace momenta
