// SiteMirror: what a root holds for one site, rebuilt from the site's
// messages: the basic-counting level, the approximate-counting values of the
// items turned on, the drift rule's count and boundaries, the last whole
// summary.
//
// A site keeps one to resynchronize: on (re)connecting it sends Snapshot(),
// messages that rebuild exactly this state on an empty slot, so the root's
// view of the site is again what the rules assume and the guarantee holds
// from then on. The root keeps one per site to refuse messages no honest
// site sends (a level below zero, more items or boundaries than the rules
// ever hold), which bounds its memory per site.
// Space: O(1/eps) entries. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "storage/util/status.h"
#include "stream/protocol/messages.h"

namespace momenta {

class SiteMirror {
 public:
  // max_entries caps the items and the boundaries each (an honest site
  // holds O(1/eps); MaxEntries gives a generous cap).
  explicit SiteMirror(size_t max_entries) : max_entries_(max_entries) {}
  static size_t MaxEntries(double eps) { return static_cast<size_t>(64 / eps) + 1024; }

  // Applies m; Corruption (leaving the mirror as it was) for a message no
  // site could have sent in this state.
  Status Apply(const Message& m);
  // Messages that rebuild this state from an empty one, stamped `tick`
  // (site 0: the root fills in the slot).
  std::vector<Message> Snapshot(int64_t tick) const;
  void Clear();

  uint64_t bc_level() const { return level_; }
  size_t items() const { return ac_.size(); }
  // Calls f(item) for every item turned on (approximate counting), ascending.
  template <typename F>
  void ForEachItem(F&& f) const {
    for (const auto& entry : ac_) f(entry.first);
  }
  size_t boundaries() const { return bounds_.size(); }

 private:
  const size_t max_entries_;
  uint64_t level_ = 0;
  std::map<int64_t, uint64_t> ac_;  // item -> half units (> 0)
  uint64_t drift_n_ = 0;
  std::map<int64_t, uint64_t> bounds_;  // value -> level
  std::optional<Message> summary_;
};

}  // namespace momenta
