// RootNames: the names the root's sites sent (NAMES frames, name_frames.h)
// for the items they count by hash, so answers can say names.
//
// Bounded: Prune keeps only the names of items some site's state still
// holds (its latest state or the one answers include, RootState's mirrors)
// and those noted since that site's last state frame (a NAMES frame comes
// just before the frame that turns its items on). It runs after state
// frames, once the table has doubled since it last ran (and holds at least
// `floor`), so the table holds at most about twice the items the sites
// hold, whatever the number of distinct names in their streams.
//
// Two names with one hash are one item to every synopsis: the root keeps
// the first name it got and counts the others (collisions(); both rules are
// HashedNames', stream/window/hashed_names.h).
// Not thread-safe: the root's event loop owns it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/util/status.h"
#include "stream/net/name_frames.h"
#include "stream/window/hashed_names.h"

namespace momenta {

class RootState;

class RootNames {
 public:
  explicit RootNames(size_t floor = 1024) : names_(floor) {}

  // The names a NAMES frame from the site of `slot` carried, on its
  // `connection`-th connection (SiteSlot::connects: what an earlier one
  // named before it closed is let go). Corruption, taking none, when the
  // site would then have named more than `max_pending` items since its last
  // state frame (an honest site names
  // only the items its next frame turns on, at most what its mirror holds:
  // SiteMirror::MaxEntries), so names sent without state cannot grow the table.
  Status Note(uint32_t slot, uint64_t connection, const std::vector<ItemName>& names, size_t max_pending);
  // The site of `slot` sent a state frame (SNAPSHOT, BATCH, FINAL): the
  // names it noted are now held or not; prunes when due.
  void Settled(uint32_t slot, const RootState& state);
  // Prunes now: keeps the items `state` holds for some site and the names
  // noted since their site's last state frame.
  void Prune(const RootState& state);

  // The name of `item`, or "" when no site sent one (an integer item).
  const std::string& NameOf(int64_t item) const;
  size_t size() const { return names_.size(); }
  uint64_t collisions() const { return names_.collisions(); }

 private:
  HashedNames names_;
  struct Pending {
    uint64_t connection = 0;
    std::unordered_set<int64_t> items;  // noted since the slot's last state frame
  };
  std::unordered_map<uint32_t, Pending> pending_;
};

}  // namespace momenta
