// SiteNames: a site's side of named items (ItemMapping "name"). It keeps the
// names of the items read (Note) that the site may still report, and says
// which names must go to the root before a frame of messages (NamesFor):
// those of the items the messages turn on whose name has not gone out on
// this connection since the item was last turned on; for a SNAPSHOT, of
// every item it turns on (a new connection, or a root that restarted).
//
// Bounded: Prune keeps the names of the items the site's synopsis holds a
// counter for (Site::items), the items turned on at the root (its mirror)
// and the items read but not yet ticked (stamped after the site's clock);
// any other item gets a counter again only when it arrives again, with its
// name. It works once the table has doubled since it last did (and holds at
// least `floor`). Two names with one hash: the first one read is kept, the
// others counted (collisions(); both rules are HashedNames',
// stream/window/hashed_names.h). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "stream/net/name_frames.h"
#include "stream/protocol/messages.h"
#include "stream/protocol/site.h"
#include "stream/protocol/site_mirror.h"
#include "stream/window/hashed_names.h"

namespace momenta {

class SiteNames {
 public:
  explicit SiteNames(size_t floor = 1024) : names_(floor) {}

  // `item` (== NameItem(name)) was read under `name`, stamped `ts`.
  void Note(int64_t item, std::string_view name, int64_t ts);
  // Forgets names as the class comment says, when due. `clock`: the site's.
  void Prune(const Site& site, const SiteMirror& mirror, int64_t clock);

  // The NAMES frames' contents to send before a frame of `messages`
  // (`snapshot`: it replaces the root's state; else a BATCH or FINAL), in
  // chunks of at most kMaxNamesPerFrame; records them as sent. An item with
  // no name known (never read under a name) is left out.
  std::vector<std::vector<ItemName>> NamesFor(const std::vector<Message>& messages, bool snapshot);

  size_t size() const { return names_.size(); }
  uint64_t collisions() const { return names_.collisions(); }

 private:
  HashedNames names_;                 // each entry's last_ts: the latest stamp it was read with
  std::unordered_set<int64_t> sent_;  // items whose name went out on this connection, turned on since
};

}  // namespace momenta
