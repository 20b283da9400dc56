#include "stream/net/site_names.h"

#include <algorithm>

namespace momenta {

void SiteNames::Note(int64_t item, std::string_view name, int64_t ts) {
  const std::string_view shown = WireName(name);
  auto [it, inserted] = names_.try_emplace(item, Entry{std::string(shown), ts});
  if (inserted) return;
  if (it->second.name != shown) ++collisions_;
  it->second.last_ts = std::max(it->second.last_ts, ts);
}

void SiteNames::Prune(const Site& site, const SiteMirror& mirror, int64_t clock) {
  if (names_.size() < prune_at_) return;
  std::unordered_set<int64_t> keep;
  if (site.items() != nullptr) site.items()->ForEachCandidate([&](int64_t item) { keep.insert(item); });
  mirror.ForEachItem([&](int64_t item) { keep.insert(item); });
  std::erase_if(names_, [&](const auto& e) { return e.second.last_ts <= clock && keep.count(e.first) == 0; });
  prune_at_ = std::max(floor_, 2 * names_.size());
}

std::vector<std::vector<ItemName>> SiteNames::NamesFor(const std::vector<Message>& messages, bool snapshot) {
  if (snapshot) sent_.clear();
  std::vector<std::vector<ItemName>> out;
  for (const Message& m : messages) {
    if (m.type == MessageType::kAcOff) {
      sent_.erase(m.item);  // the root may forget it: its name goes again if it comes back
      continue;
    }
    if (m.type != MessageType::kAcSet || sent_.count(m.item) != 0) continue;
    const auto it = names_.find(m.item);
    if (it == names_.end()) continue;
    if (out.empty() || out.back().size() == kMaxNamesPerFrame) out.emplace_back();
    out.back().push_back({m.item, it->second.name});
    sent_.insert(m.item);
  }
  return out;
}

}  // namespace momenta
