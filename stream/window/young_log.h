// YoungLog<Entry>: the exact entries of a window synopsis's young buckets,
// settled buckets small enough that their payload needs no summary yet
// (item_counts.h, window_quantiles.h).
//
// At one item per tick every item is a bucket of its own. A young bucket
// keeps its (key, count) entries unsorted as a range of one shared vector,
// appended when it settles; young neighbors merge by joining their ranges,
// with no copy, and the owner sorts and packs a bucket's entries once, when
// a merge would make it too big to stay young (or it reaches the window's
// edge). Ranges are appended in time order and merges join only neighbors,
// so two young buckets next to each other in the window have adjacent
// ranges (MergeYoung checks it). A range the owner stops using is Released;
// Trim drops the dead entries once they outnumber the live ones (plus
// kSlack), so the log holds at most twice its live entries plus kSlack.
// Not thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace momenta {

template <class Entry>
class YoungLog {
 public:
  // A young bucket's entries: [at, at + len) of the log. len == 0: not young.
  struct Range {
    uint32_t at = 0, len = 0;
    bool young() const { return len > 0; }
  };
  static constexpr size_t kSlack = 4096;  // dead entries always tolerated

  // Starts a range at the end of the log: Push its entries, then Close.
  // REQUIRES: no range open
  void Open(Range* r) const { r->at = static_cast<uint32_t>(log_.size()); }
  void Push(const Entry& e) { log_.push_back(e); }
  void Close(Range* r) {
    r->len = static_cast<uint32_t>(log_.size() - r->at);
    live_ += r->len;
  }
  // A synopsis's MergeGroup (bucket_window.h) of members, oldest first, into
  // out (its n set): when out holds at most `limit` items and every member is
  // young and follows the one before, out takes their joined range, exact
  // (err 0), and true is returned; else nothing changes. Bucket's payload
  // has a `young` Range.
  template <class Bucket>
  static bool MergeYoung(Bucket* const* members, size_t count, size_t limit, Bucket& out) {
    if (out.n > limit) return false;
    Range joined = members[0]->payload.young;
    for (size_t i = 1; i < count && joined.young(); ++i)
      joined = Joinable(joined, members[i]->payload.young) ? Join(joined, members[i]->payload.young) : Range{};
    if (!joined.young()) return false;
    out.payload.young = joined;
    out.err = 0;
    return true;
  }
  // r's entries stop being used (the bucket was packed or merged); r is no longer young.
  void Release(Range* r) {
    assert(live_ >= r->len);
    live_ -= r->len;
    r->len = 0;
  }

  const Entry* begin(const Range& r) const { return log_.data() + r.at; }
  const Entry* end(const Range& r) const { return log_.data() + r.at + r.len; }

  // Drops the dead entries when they outnumber the live ones (plus kSlack).
  // each_range(f) must call f(Range&) for every live range, oldest first.
  template <class EachRange>
  void Trim(EachRange&& each_range) {
    if (log_.size() < 2 * live_ + kSlack) return;
    std::vector<Entry> kept;
    kept.reserve(2 * live_ + kSlack);
    each_range([&](Range& r) {
      if (!r.young()) return;
      const Entry* from = begin(r);
      r.at = static_cast<uint32_t>(kept.size());
      kept.insert(kept.end(), from, from + r.len);
    });
    assert(kept.size() == live_);
    log_.swap(kept);
  }

  size_t live() const { return live_; }
  size_t MemoryBytes() const { return log_.capacity() * sizeof(Entry); }

 private:
  // True when b's range follows a's directly (a merge may join them).
  static bool Joinable(const Range& a, const Range& b) { return a.young() && b.young() && a.at + a.len == b.at; }
  // The range covering a and then b. REQUIRES: Joinable(a, b)
  static Range Join(const Range& a, const Range& b) { return {a.at, a.len + b.len}; }

  std::vector<Entry> log_;  // young buckets' entries in time order, with dead gaps
  size_t live_ = 0;         // entries that a live range covers
};

}  // namespace momenta
