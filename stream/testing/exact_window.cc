#include "stream/testing/exact_window.h"

#include <cassert>
#include <cmath>
#include <limits>

namespace momenta {

void ExactWindow::AdvanceTo(int64_t t) {
  assert(t >= now_);
  now_ = t;
  const int64_t edge = now_ - spec_.window;
  while (!by_time_.empty() && by_time_.begin()->first <= edge) {
    for (const Key& k : by_time_.begin()->second) {
      ranks_.erase(k);
      auto it = counts_.find(k.first);
      if (--it->second == 0) counts_.erase(it);
      ++expiries_;
    }
    by_time_.erase(by_time_.begin());
  }
}

bool ExactWindow::Add(int64_t ts, int64_t item) {
  if (ts > now_) AdvanceTo(ts);
  if (!AcceptsArrival(spec_, now_, ts)) {
    ++dropped_;
    return false;
  }
  const Key k{item, next_id_++};
  by_time_[ts].push_back(k);
  ranks_.insert(k);
  ++counts_[item];
  ++arrivals_;
  return true;
}

uint64_t ExactWindow::Count(int64_t item) const {
  auto it = counts_.find(item);
  return it == counts_.end() ? 0 : it->second;
}

uint64_t ExactWindow::RankLess(int64_t x) const { return ranks_.order_of_key(Key{x, 0}); }

uint64_t ExactWindow::RankLessEq(int64_t x) const {
  return ranks_.order_of_key(Key{x, std::numeric_limits<uint64_t>::max()});
}

int64_t ExactWindow::AtRank(uint64_t r) const {
  assert(r < count());
  return ranks_.find_by_order(r)->first;
}

RankRange AnswerRanks(const ExactWindow& w, int64_t x) {
  const uint64_t less = w.RankLess(x), less_eq = w.RankLessEq(x);
  if (less_eq > less) return {less + 1, less_eq};
  return {std::max<uint64_t>(1, less), std::min<uint64_t>(w.count(), less + 1)};
}

bool QuantileOk(const ExactWindow& w, int64_t x, double phi, double eps) {
  const double c = static_cast<double>(w.count());
  if (c == 0) return true;
  const RankRange r = AnswerRanks(w, x);
  const double lo = std::floor((phi - eps) * c), hi = std::ceil((phi + eps) * c);
  return static_cast<double>(r.hi) >= lo && static_cast<double>(r.lo) <= hi;
}

}  // namespace momenta
