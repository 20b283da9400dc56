// NameTable: the names of items counted by their hash (ItemMapping "name",
// NameItem), kept beside the synopsis so that what it reports (top and
// frequent items) can be said in names. Only items that can be reported
// need one: an item the summaries hold no counter for (not among
// ItemCounts::ForEachCandidate) is never reported, and gets a counter again
// only when it arrives again, with its name. So Prune forgets the names of
// the items the summaries do not hold, and the table holds at most about
// twice the items the synopsis holds (O((1/e) log(eN)) for ItemCounts at e),
// however many distinct names the stream has.
//
// Two names with one hash are one item to the synopsis: the first name seen
// keeps the item, and the collision is counted (collisions()); both rules
// are HashedNames' (hashed_names.h). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stream/window/hashed_names.h"
#include "stream/window/item_counts.h"

namespace momenta {

class NameTable {
 public:
  // Records that `item` (== NameItem(name)) arrived under `name`.
  void Note(int64_t item, std::string_view name);
  // Forgets the names of items `counts` holds no counter for, once the table
  // has doubled since it last did (and holds at least 1024).
  void Prune(const ItemCounts& counts);
  // The name of `item`, or "#" and its hash in hex when none is known.
  std::string NameOf(int64_t item) const;

  size_t size() const { return names_.size(); }
  // Names that arrived with the hash of another name already in the table.
  uint64_t collisions() const { return names_.collisions(); }

 private:
  HashedNames names_{1024};
};

}  // namespace momenta
