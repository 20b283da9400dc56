#include "stream/window/name_table.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace momenta {

void NameTable::Note(int64_t item, std::string_view name) {
  auto [it, inserted] = names_.try_emplace(item, name);
  if (!inserted && it->second != name) ++collisions_;
}

void NameTable::Prune(const ItemCounts& counts) {
  if (names_.size() < prune_at_) return;
  std::unordered_set<int64_t> held;
  counts.ForEachCandidate([&](int64_t item) { held.insert(item); });
  std::erase_if(names_, [&](const auto& entry) { return held.count(entry.first) == 0; });
  prune_at_ = std::max<size_t>(1024, 2 * names_.size());
}

std::string NameTable::NameOf(int64_t item) const {
  if (auto it = names_.find(item); it != names_.end()) return it->second;
  char buf[24];
  std::snprintf(buf, sizeof buf, "#%016llx", static_cast<unsigned long long>(item));
  return buf;
}

}  // namespace momenta
