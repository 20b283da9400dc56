#include "stream/protocol/quantile_summary_rule.h"

#include <cassert>
#include <cmath>

namespace momenta {

QuantileSummarySite::QuantileSummarySite(double eps)
    : gamma_(eps / 10), m_(static_cast<size_t>(std::ceil(1 / (eps / 10))) + 1) {}

bool QuantileSummarySite::Due(double gamma, bool sent, double n_last, double changes, double count) {
  if (!sent) return count > 0;
  return changes > gamma * n_last || count > (1 + gamma) * n_last || count < n_last / (1 + gamma);
}

void QuantileSummarySite::Check(const WindowQuantiles& q, uint64_t arrivals, uint32_t site, int64_t tick,
                                std::vector<Message>* out) {
  const double count = q.Count();
  // Expiries this tick = previous + arrivals - now; the estimates' errors
  // telescope over a run of ticks, so the sum stays within twice one error.
  changes_ += static_cast<double>(arrivals) + std::max(0.0, previous_ + static_cast<double>(arrivals) - count);
  previous_ = count;
  if (!Due(gamma_, sent_, n_last_, changes_, count)) return;
  Message m;
  m.type = MessageType::kQSummary;
  m.site = site;
  m.tick = tick;
  m.count = static_cast<uint64_t>(std::llround(count));
  if (m.count > 0) {
    const RankSnapshot snap = q.Snapshot();
    for (size_t i = 1; i <= m_; ++i) {
      const uint64_t rho = (i * m.count + m_ - 1) / m_;
      const int64_t v = *snap.ValueAtRank(static_cast<double>(rho));
      if (!m.pairs.empty() && m.pairs.back().value == v) {
        m.pairs.back().rank = rho;
      } else if (m.pairs.empty() || m.pairs.back().value < v) {
        m.pairs.push_back({v, rho});
      }
    }
  }
  out->push_back(std::move(m));
  sent_ = true;
  n_last_ = count;
  changes_ = 0;
}

void ApplySummary(const Message& m, RankSteps* steps) {
  assert(m.type == MessageType::kQSummary);
  steps->values.clear();
  steps->levels.clear();
  for (const RankPair& p : m.pairs) {
    steps->values.push_back(p.value);
    steps->levels.push_back(static_cast<double>(p.rank));
  }
  steps->count = static_cast<double>(m.count);
}

}  // namespace momenta
