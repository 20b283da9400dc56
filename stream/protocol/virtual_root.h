// VirtualRoot: the root of the monitoring protocol without a network. It
// applies the messages of k sites (stream/protocol/site.h) in tick order and answers
// as the protocol's root would: the count (sum of the sites' basic-counting
// values), the count of any item (sum of their approximate-counting values),
// the frequent items for any phi > eps/2 (stream/REFERENCE.md §4.1:
// sum r_j >= (phi - eps/2) * sum r), and quantiles under either quantile rule
// (rank_steps.h). Its answers after every message of tick t meet eps for the
// window ending at t: the stream tests check that against an exact window.
// Space: O(k/eps) words per rule. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "stream/protocol/count_grid.h"
#include "stream/protocol/messages.h"
#include "stream/protocol/quantile_drift_rule.h"
#include "stream/protocol/rank_steps.h"
#include "stream/window/item_counts.h"

namespace momenta {

class VirtualRoot {
 public:
  // REQUIRES: 0 < eps < 1 (sites may be 0 when they are added later)
  VirtualRoot(uint32_t sites, double eps);

  // Corruption-free by construction: messages come from Sites. REQUIRES: m.site < sites
  void Apply(const Message& m);
  // A new, empty site slot; returns its index. (A network root grows as
  // sites connect.)
  uint32_t AddSite();
  // Forgets everything site `site` reported, as if it never had: its count,
  // items and quantile steps leave the answers (a site that disconnected, or
  // one about to resend its whole state). REQUIRES: site < sites
  void ResetSite(uint32_t site);

  double Count() const;
  double ItemCount(int64_t item) const;
  // REQUIRES: eps/2 < phi <= 1
  std::vector<ItemEstimate> Frequent(double phi) const;
  // Every item some site reports (non-zero), by descending count.
  std::vector<ItemEstimate> Items() const;
  std::optional<int64_t> QuantileByDrift(double phi);
  std::optional<int64_t> QuantileBySummary(double phi);

  // One site's values, for per-site checks.
  double SiteCount(uint32_t site) const;
  double SiteItemCount(uint32_t site, int64_t item) const;
  uint32_t sites() const { return static_cast<uint32_t>(bc_level_.size()); }
  double eps() const { return eps_; }

 private:
  const double eps_;
  CountGrid grid_;
  std::vector<uint64_t> bc_level_;
  std::vector<std::unordered_map<int64_t, uint64_t>> ac_site_;  // per site: item -> half units
  std::unordered_map<int64_t, uint64_t> ac_total_;              // item -> sum over sites
  std::vector<DriftSteps> drift_;
  std::vector<RankSteps> summary_;
};

}  // namespace momenta
