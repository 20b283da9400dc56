#include "stream/window/name_table.h"

#include <cstdio>
#include <unordered_set>

namespace momenta {

void NameTable::Note(int64_t item, std::string_view name) { names_.Note(item, name); }

void NameTable::Prune(const ItemCounts& counts) {
  if (!names_.PruneDue()) return;
  std::unordered_set<int64_t> held;
  counts.ForEachCandidate([&](int64_t item) { held.insert(item); });
  names_.PruneIf([&](int64_t item, const HashedNames::Entry&) { return held.count(item) == 0; });
}

std::string NameTable::NameOf(int64_t item) const {
  if (const HashedNames::Entry* e = names_.Find(item)) return e->name;
  char buf[24];
  std::snprintf(buf, sizeof buf, "#%016llx", static_cast<unsigned long long>(item));
  return buf;
}

}  // namespace momenta
