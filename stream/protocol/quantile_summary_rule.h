// Quantiles by whole summaries, site side: the reconstruction of Chan et
// al.'s scheme (stream/REFERENCE.md §4.2, [R]), kept as the baseline the drift rule is
// measured against.
//
// With gamma = eps/10 the site keeps WindowQuantiles at gamma (owned by the
// caller) and sends SUMMARY(n, (v_1, rho_1) ... (v_m, rho_m)), m = ceil(1/gamma)+1:
// n its rounded count estimate, rho_i = ceil(i n / m), v_i the smallest
// sampled value whose estimated rank reaches rho_i (pairs with equal values
// keep the largest rank; an empty window sends n = 0). It re-sends when the
// arrivals plus expiries since the last summary exceed gamma * n_last, or the
// count leaves [n_last/(1+gamma), (1+gamma) n_last]. Each summary costs
// 2 + 2m words: about 400/eps^2 words per window on a busy site, more than
// sending every arrival and expiry until a site's window holds ~200/eps^2 items.
#pragma once

#include <cstdint>
#include <vector>

#include "stream/protocol/messages.h"
#include "stream/protocol/rank_steps.h"
#include "stream/window/window_quantiles.h"

namespace momenta {

class QuantileSummarySite {
 public:
  // REQUIRES: 0 < eps < 1
  explicit QuantileSummarySite(double eps);

  // The WindowQuantiles eps this rule assumes.
  double synopsis_eps() const { return gamma_; }
  // After the tick's `arrivals` (accepted items) went into q: appends a
  // summary when one is due.
  void Check(const WindowQuantiles& q, uint64_t arrivals, uint32_t site, int64_t tick, std::vector<Message>* out);

  // True when the rule would re-send now (used as the shadow schedule of the
  // drift rule's budget): changes and count as of this tick.
  static bool Due(double gamma, bool sent, double n_last, double changes, double count);
  size_t pairs_per_summary() const { return m_; }

 private:
  double gamma_;
  size_t m_;
  bool sent_ = false;
  double n_last_ = 0;    // n of the last summary
  double changes_ = 0;   // arrivals + expiries since it
  double previous_ = 0;  // count estimate after the previous tick
};

// The root's view of one site under the summary rule.
void ApplySummary(const Message& m, RankSteps* steps);

}  // namespace momenta
