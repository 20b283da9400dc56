// Quantiles by drift reports, site side: momenta's own rule (the whole-summary
// rule re-sends ~1/gamma pairs whenever a gamma share of the window changed;
// this one re-sends only what drifted).
//
// The root holds, per site, a count N and boundaries v_1 < ... < v_m with
// levels f_i (fractions of N): R(x) = f_i N for v_i <= x < v_{i+1}, 0 below
// v_1. The site keeps WindowQuantiles at 0.3 eps and WindowCount at 0.02 eps
// (both the caller's) and checks its steps whenever arrivals plus expiries
// (estimated from the count's fall) since the last check reach 0.1 eps of
// the count estimate taken at that check; then, with S the estimate now:
//   - COUNT(N = S) when |S - N| > 0.03 eps S, or S rounds to 0 and N is not 0;
//   - for each step, with [lo, hi] the estimated ranks of its values, the
//     level must be within 0.35 eps S of both ends, else LEVEL(v_i, mid);
//   - a step wider than 0.35 eps S is split at its rank midpoint (a new
//     boundary, LEVEL); two neighbors at most 0.2 eps S wide together
//     merge (DROP of the boundary between them).
// Between checks no rank moves by more than 0.1 eps S, so every site's R
// stays within (0.45 + 0.3) eps of its true rank function, its N within
// 0.15 eps of its count, and the interval rule (rank_steps.h) answers within
// (0.75 + 0.15) eps c + 1 rank. On a steady stream the levels stay put: the
// traffic is COUNT words and the occasional level. Levels travel as 32-bit
// fractions; the errors above are computed on the quantized levels.
//
// Never much dearer than whole summaries: any two neighboring steps hold
// more than 0.2 eps S, so a site has at most 10/eps + 1 boundaries, and a
// check sends each at most one message (LEVEL, 2 words, or DROP, 1) plus a
// COUNT: <= 30/eps + 4 words, against 20/eps + 4 for one whole summary
// (quantile_summary_rule.h). Checks come after 0.1 eps S changes, the
// summaries after 0.1 eps n changes (or sooner), so per window the drift rule
// sends at most ~1.5x the whole-summary rule's words on any stream.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "stream/protocol/messages.h"
#include "stream/protocol/rank_steps.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"

namespace momenta {

class QuantileDriftSite {
 public:
  // REQUIRES: 0 < eps < 1
  explicit QuantileDriftSite(double eps) : eps_(eps) {}

  // The eps of the WindowQuantiles and the WindowCount this rule assumes.
  double synopsis_eps() const { return kSynopsis * eps_; }
  double count_eps() const { return kCountEps * eps_; }
  // After the tick's `arrivals` (accepted items) went into q and count:
  // appends this tick's messages (nothing unless a check is due).
  void Check(const WindowQuantiles& q, const WindowCount& count, uint64_t arrivals, uint32_t site, int64_t tick,
             std::vector<Message>* out);

  size_t boundary_count() const { return bounds_.size(); }
  uint64_t reported_count() const { return N_; }
  uint64_t checks() const { return checks_; }

  static constexpr double kSynopsis = 0.3, kCountEps = 0.02, kCountReport = 0.03, kCheck = 0.1;
  static constexpr double kAllow = 0.35, kSplit = 0.35, kMerge = 0.2;
  static constexpr uint64_t kOne = uint64_t{1} << 32;  // level 1.0

 private:
  struct Step {
    int64_t value;   // the boundary opening the step
    uint64_t level;  // fraction of N, kOne = 1
    double lo, hi;   // estimated ranks of the step's first and last values
    bool fresh;      // new or re-leveled this check
  };
  double Level(uint64_t q) const { return static_cast<double>(q) * static_cast<double>(N_) / kOne; }
  uint64_t Quantize(double rank) const;
  // Splits steps wider than `split` (the open step below the first boundary too).
  void Split(const RankSnapshot& snap, double split, std::vector<Step>* steps, double* below_hi) const;

  double eps_;
  std::map<int64_t, uint64_t> bounds_;  // value -> level, as the root holds them
  uint64_t N_ = 0;
  bool started_ = false;
  double changes_ = 0, previous_ = 0, check_count_ = 0;
  uint64_t checks_ = 0;
};

// The root's view of one site under the drift rule.
class DriftSteps {
 public:
  void Apply(const Message& m);
  // The step function with levels in ranks (rebuilt after changes).
  const RankSteps& steps();

 private:
  std::map<int64_t, uint64_t> bounds_;
  uint64_t N_ = 0;
  RankSteps steps_;
  bool dirty_ = true;
};

}  // namespace momenta
