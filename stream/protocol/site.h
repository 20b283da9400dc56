// Site: one stream's half of the monitoring protocol, with no network: the
// window synopses each rule needs and the rules themselves (basic counting,
// approximate counting with turn-off, the two quantile rules), producing the
// messages a site would send its root as values (stream/protocol/messages.h;
// SiteClient, site_client.h, runs a Site and sends them over TCP).
//
// All rules aim at the root answering within eps:
//   - count:           BC at eps/24 (its WindowCount at eps/72)
//   - item counts and frequent items: AC at alpha = 11 eps/24 (ItemCounts at
//     0.35 alpha); with BC at eps/24 the root's frequent items are exact to eps
//   - quantiles:       the drift rule (WindowQuantiles at 0.3 eps, WindowCount
//     at 0.02 eps) and, when asked for, the whole-summary baseline
//     (WindowQuantiles at eps/10)
// Each rule is optional (SiteOptions) so a benchmark can run one alone.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "stream/protocol/approx_count_rule.h"
#include "stream/protocol/basic_count_rule.h"
#include "stream/protocol/messages.h"
#include "stream/protocol/quantile_drift_rule.h"
#include "stream/protocol/quantile_summary_rule.h"
#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "stream/window/window_spec.h"

namespace momenta {

struct SiteOptions {
  WindowSpec spec;
  double eps = 0.1;
  bool basic_count = true;
  bool approx_count = true;
  bool quantile_drift = true;
  bool quantile_summary = false;
};

// The targets SiteOptions' eps implies.
inline double BasicCountEps(double eps) { return eps / 24; }
inline double ApproxCountAlpha(double eps) { return 11 * eps / 24; }

class Site {
 public:
  Site(const Site&) = delete;
  Site& operator=(const Site&) = delete;
  // InvalidArgument for a bad spec or eps outside (0, 1).
  static Result<std::unique_ptr<Site>> Create(uint32_t id, const SiteOptions& options);

  // Moves the clock to t, takes this tick's arrivals (each stamped
  // t - tau <= ts <= t; others, after t or more than tau late, are dropped
  // and counted in dropped()) and appends the messages of tick t.
  // REQUIRES: t >= the previous tick
  void Tick(int64_t t, const std::vector<Arrival>& arrivals, std::vector<Message>* out);

  // The first tick after the last one at which Tick(t, {}) could send
  // anything: when a synopsis next changes with no arrivals; kMaxTime once
  // every window is empty. A site whose input ended drains its windows by
  // ticking only at these times (SiteClient::Finish).
  int64_t NextChange() const;

  uint32_t id() const { return id_; }
  uint64_t dropped() const { return dropped_; }
  size_t MemoryBytes() const;

  // The synopses and rules, for checks (null when the rule is off).
  const WindowCount* bc_count() const { return bc_count_ ? &*bc_count_ : nullptr; }
  const BasicCountSite* bc() const { return bc_ ? &*bc_ : nullptr; }
  const ItemCounts* items() const { return items_ ? &*items_ : nullptr; }
  const ApproxCountSite* ac() const { return ac_ ? &*ac_ : nullptr; }
  const QuantileDriftSite* drift() const { return drift_ ? &*drift_ : nullptr; }
  const QuantileSummarySite* summary() const { return summary_ ? &*summary_ : nullptr; }

 private:
  Site(uint32_t id, const SiteOptions& options) : id_(id), options_(options) {}

  const uint32_t id_;
  const SiteOptions options_;
  uint64_t dropped_ = 0;
  std::optional<WindowCount> bc_count_;
  std::optional<BasicCountSite> bc_;
  std::optional<ItemCounts> items_;
  std::optional<ApproxCountSite> ac_;
  std::optional<WindowQuantiles> drift_q_;
  std::optional<WindowCount> drift_count_;
  std::optional<QuantileDriftSite> drift_;
  std::optional<WindowQuantiles> summary_q_;
  std::optional<QuantileSummarySite> summary_;
};

}  // namespace momenta
