#include "stream/net/site_names.h"

namespace momenta {

void SiteNames::Note(int64_t item, std::string_view name, int64_t ts) { names_.Note(item, WireName(name), ts); }

void SiteNames::Prune(const Site& site, const SiteMirror& mirror, int64_t clock) {
  if (!names_.PruneDue()) return;
  std::unordered_set<int64_t> keep;
  if (site.items() != nullptr) site.items()->ForEachCandidate([&](int64_t item) { keep.insert(item); });
  mirror.ForEachItem([&](int64_t item) { keep.insert(item); });
  names_.PruneIf(
      [&](int64_t item, const HashedNames::Entry& e) { return e.last_ts <= clock && keep.count(item) == 0; });
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
    const HashedNames::Entry* known = names_.Find(m.item);
    if (known == nullptr) continue;
    if (out.empty() || out.back().size() == kMaxNamesPerFrame) out.emplace_back();
    out.back().push_back({m.item, known->name});
    sent_.insert(m.item);
  }
  return out;
}

}  // namespace momenta
