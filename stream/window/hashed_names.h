// HashedNames: the names of items counted by their hash (NameItem), with the
// two rules every table of them keeps (NameTable beside a synopsis, a site's
// SiteNames and the root's RootNames in stream/net/):
//   - two names with one hash are one item: the first name noted keeps it,
//     and each later, different one is counted (collisions());
//   - bounded by its owner's pruning, which is due once the table has
//     doubled since it last ran (and holds at least `floor`), so the table
//     holds at most about twice the items its owner keeps.
// What to forget is the owner's to say (PruneIf). Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace momenta {

class HashedNames {
 public:
  struct Entry {
    std::string name;
    int64_t last_ts = 0;  // the latest stamp it was noted with (0 where the owner notes none)
  };

  explicit HashedNames(size_t floor = 1024) : floor_(floor), prune_at_(floor) {}

  // `item` arrived under `name`, stamped `ts`.
  void Note(int64_t item, std::string_view name, int64_t ts = 0) {
    auto [it, inserted] = names_.try_emplace(item, Entry{std::string(name), ts});
    if (inserted) return;
    if (it->second.name != name) ++collisions_;
    it->second.last_ts = std::max(it->second.last_ts, ts);
  }
  // Whether the table has doubled since the last PruneIf (or reached the floor).
  bool PruneDue() const { return names_.size() >= prune_at_; }
  // Forgets every entry for which drop(item, entry) is true; the next prune
  // is due at twice what is left (at least the floor).
  template <typename Drop>
  void PruneIf(Drop&& drop) {
    std::erase_if(names_, [&](const auto& e) { return drop(e.first, e.second); });
    prune_at_ = std::max(floor_, 2 * names_.size());
  }

  // The entry of `item`, or nullptr when no name is known.
  const Entry* Find(int64_t item) const {
    const auto it = names_.find(item);
    return it == names_.end() ? nullptr : &it->second;
  }
  size_t size() const { return names_.size(); }
  // Names that arrived with the hash of another name already in the table.
  uint64_t collisions() const { return collisions_; }

 private:
  size_t floor_;
  size_t prune_at_;
  std::unordered_map<int64_t, Entry> names_;
  uint64_t collisions_ = 0;
};

}  // namespace momenta
