// ExactWindow: the exact contents of a sliding window (every item kept), the
// reference the synopses and protocols are checked against. Same clock and
// tardiness rules as the synopses (window_spec.h). Memory grows with the
// window: for tests, benchmarks and `verify`-style checks only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include "stream/window/window_spec.h"

namespace momenta {

class ExactWindow {
 public:
  explicit ExactWindow(const WindowSpec& spec) : spec_(spec) {}

  // REQUIRES: t >= now()
  void AdvanceTo(int64_t t);
  // False (and dropped) when later than the tardiness allows; a timestamp
  // after the clock moves the clock first.
  bool Add(int64_t ts, int64_t item);

  int64_t now() const { return now_; }
  uint64_t count() const { return ranks_.size(); }
  uint64_t Count(int64_t item) const;
  const std::unordered_map<int64_t, uint64_t>& counts() const { return counts_; }
  uint64_t RankLess(int64_t x) const;    // #{items < x}
  uint64_t RankLessEq(int64_t x) const;  // #{items <= x}
  // The item of 0-based rank r in sorted order. REQUIRES: r < count()
  int64_t AtRank(uint64_t r) const;
  uint64_t arrivals() const { return arrivals_; }  // accepted, since the start
  uint64_t expiries() const { return expiries_; }
  uint64_t dropped() const { return dropped_; }

 private:
  using Key = std::pair<int64_t, uint64_t>;  // (item, arrival id)
  using Tree = __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                                __gnu_pbds::tree_order_statistics_node_update>;
  WindowSpec spec_;
  int64_t now_ = -kMaxTime;
  std::map<int64_t, std::vector<Key>> by_time_;  // timestamp -> items
  std::unordered_map<int64_t, uint64_t> counts_;
  Tree ranks_;
  uint64_t next_id_ = 0;
  uint64_t arrivals_ = 0, expiries_ = 0, dropped_ = 0;
};

// The ranks a quantile answer x may claim in `w`: [#{<x}+1, #{<=x}] when x is
// in the window, else between its neighbors, [max(1, #{<x}), min(c, #{<x}+1)].
struct RankRange {
  uint64_t lo = 0, hi = 0;
};
RankRange AnswerRanks(const ExactWindow& w, int64_t x);
// True when x is a valid phi-quantile within eps: its rank range meets
// [floor((phi-eps) c), ceil((phi+eps) c)] (widened to whole ranks, so that
// a tiny window where 2*eps*c < 1 has an exact answer that passes).
// An empty window accepts anything.
bool QuantileOk(const ExactWindow& w, int64_t x, double phi, double eps);

}  // namespace momenta
