#include "stream/net/root_names.h"

#include "stream/net/root_state.h"

namespace momenta {

Status RootNames::Note(uint32_t slot, uint64_t connection, const std::vector<ItemName>& names, size_t max_pending) {
  Pending& p = pending_[slot];
  if (p.connection != connection) p = Pending{connection, {}};
  auto& pending = p.items;
  if (pending.size() + names.size() > max_pending)
    return Status::Corruption("names",
                              "more than " + std::to_string(max_pending) + " names before a frame turning items on");
  for (const ItemName& n : names) {
    names_.Note(n.item, n.name);
    pending.insert(n.item);
  }
  return Status::OK();
}

void RootNames::Settled(uint32_t slot, const RootState& state) {
  pending_.erase(slot);
  if (names_.PruneDue()) Prune(state);
}

void RootNames::Prune(const RootState& state) {
  std::unordered_set<int64_t> keep;
  std::erase_if(pending_, [&](const auto& entry) {
    return entry.first >= state.slots().size() || !state.slots()[entry.first].in_use;
  });
  for (const auto& [slot, p] : pending_) keep.insert(p.items.begin(), p.items.end());
  for (const SiteSlot& s : state.slots()) {
    if (!s.in_use) continue;
    s.mirror->ForEachItem([&](int64_t item) { keep.insert(item); });
    s.applied->ForEachItem([&](int64_t item) { keep.insert(item); });
  }
  names_.PruneIf([&](int64_t item, const HashedNames::Entry&) { return keep.count(item) == 0; });
}

const std::string& RootNames::NameOf(int64_t item) const {
  static const std::string kNone;
  const HashedNames::Entry* e = names_.Find(item);
  return e == nullptr ? kNone : e->name;
}

}  // namespace momenta
