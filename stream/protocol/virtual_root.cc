#include "stream/protocol/virtual_root.h"

#include <algorithm>
#include <cassert>

#include "stream/protocol/quantile_summary_rule.h"
#include "stream/protocol/site.h"

namespace momenta {

VirtualRoot::VirtualRoot(uint32_t sites, double eps)
    : eps_(eps), grid_(BasicCountEps(eps) / 3), bc_level_(sites, 0), ac_site_(sites), drift_(sites), summary_(sites) {}

uint32_t VirtualRoot::AddSite() {
  bc_level_.push_back(0);
  ac_site_.emplace_back();
  drift_.emplace_back();
  summary_.emplace_back();
  return sites() - 1;
}

void VirtualRoot::ResetSite(uint32_t site) {
  assert(site < sites());
  bc_level_[site] = 0;
  for (const auto& [item, half] : ac_site_[site]) {
    auto it = ac_total_.find(item);
    it->second -= half;
    if (it->second == 0) ac_total_.erase(it);
  }
  ac_site_[site].clear();
  drift_[site] = DriftSteps();
  summary_[site] = RankSteps();
}

void VirtualRoot::Apply(const Message& m) {
  assert(m.site < sites());
  switch (m.type) {
    case MessageType::kBcDelta:
      bc_level_[m.site] = static_cast<uint64_t>(static_cast<int64_t>(bc_level_[m.site]) + m.delta);
      break;
    case MessageType::kAcSet:
    case MessageType::kAcOff: {
      auto& site = ac_site_[m.site];
      const uint64_t old = site.count(m.item) ? site[m.item] : 0;
      const uint64_t now = m.type == MessageType::kAcSet ? m.count : 0;
      if (now) {
        site[m.item] = now;
      } else {
        site.erase(m.item);
      }
      uint64_t& total = ac_total_[m.item];
      total = total - old + now;
      if (total == 0) ac_total_.erase(m.item);
      break;
    }
    case MessageType::kQSummary:
      ApplySummary(m, &summary_[m.site]);
      break;
    case MessageType::kQCount:
    case MessageType::kQLevel:
    case MessageType::kQDrop:
      drift_[m.site].Apply(m);
      break;
  }
}

double VirtualRoot::SiteCount(uint32_t site) const { return static_cast<double>(grid_.Value(bc_level_[site])); }

double VirtualRoot::Count() const {
  double c = 0;
  for (uint32_t s = 0; s < sites(); ++s) c += SiteCount(s);
  return c;
}

double VirtualRoot::SiteItemCount(uint32_t site, int64_t item) const {
  auto it = ac_site_[site].find(item);
  return it == ac_site_[site].end() ? 0 : 0.5 * static_cast<double>(it->second);
}

double VirtualRoot::ItemCount(int64_t item) const {
  auto it = ac_total_.find(item);
  return it == ac_total_.end() ? 0 : 0.5 * static_cast<double>(it->second);
}

std::vector<ItemEstimate> VirtualRoot::Frequent(double phi) const {
  assert(phi > eps_ / 2 && phi <= 1);
  const double threshold = (phi - eps_ / 2) * Count();
  std::vector<ItemEstimate> out;
  for (const auto& [item, half] : ac_total_) {
    const double c = 0.5 * static_cast<double>(half);
    if (c >= threshold) out.push_back({item, c});
  }
  std::sort(out.begin(), out.end(), [](const ItemEstimate& a, const ItemEstimate& b) {
    return a.count != b.count ? a.count > b.count : a.item < b.item;
  });
  return out;
}

std::vector<ItemEstimate> VirtualRoot::Items() const {
  std::vector<ItemEstimate> out;
  out.reserve(ac_total_.size());
  for (const auto& [item, half] : ac_total_) out.push_back({item, 0.5 * static_cast<double>(half)});
  std::sort(out.begin(), out.end(), [](const ItemEstimate& a, const ItemEstimate& b) {
    return a.count != b.count ? a.count > b.count : a.item < b.item;
  });
  return out;
}

std::optional<int64_t> VirtualRoot::QuantileByDrift(double phi) {
  std::vector<const RankSteps*> sites;
  for (auto& d : drift_) sites.push_back(&d.steps());
  return AnswerQuantile(sites, phi);
}

std::optional<int64_t> VirtualRoot::QuantileBySummary(double phi) {
  std::vector<const RankSteps*> sites;
  for (const auto& s : summary_) sites.push_back(&s);
  return AnswerQuantile(sites, phi);
}

}  // namespace momenta
