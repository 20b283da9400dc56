// ItemCounts: the count of any item in the sliding window, and the frequent
// items, in memory that does not grow with the number of items in the window
// (an exponential histogram of Misra-Gries summaries; bucket_window.h,
// misra_gries.h).
//
// Guarantees at every clock value, for a window of c items, with
// e = item_eps (Create's argument):
//   - |Estimate(j) - c_j| <= ErrorBound() <= e*c for every item j, and
//     Bounds(j) contains c_j (an item never seen has estimate <= e*c);
//   - |Count() - c| <= (e/2)*c;
//   - Frequent(phi), for phi > 1.5e, returns every j with c_j >= phi*c and
//     none with c_j < (phi - 3e)*c: frequent items at eps = 3e.
// How: buckets are merged while n_b <= e*(items newer than b), each holds a
// Misra-Gries summary of m = ceil(1/e) - 1 counters, so the summaries
// undercount by at most c/(m+1) in total and the bucket straddling the
// window's edge holds at most e*c items; the estimate is the midpoint of what
// both allow. An aggregate map keeps every item's total over the full buckets
// but the newest (whose counts join it when a newer bucket opens, or, reduced
// to m counters, when it settles; in batches, so that its cache misses
// overlap), so an arrival costs one hash update and Estimate is three
// look-ups plus one binary search in the straddler.
//
// Young buckets (young_log.h): a settled bucket of at most y = min(m, 256)
// items needs no reduction, so it keeps its exact (item, count) entries in
// the shared log until a merge would pass y items; then they are sorted
// (key_count_sort.h) and packed, once. At one item per tick this spares the
// sorting and packing of tiny buckets at every merge level. Young buckets are
// in practice the newest settled ones (n <= e * newer: about the newest 2y/e
// items), and never the straddler (Detach packs it).
//
// Memory, for N items in the window: O((1/e) log(e N)) settled buckets
// (an 80-byte record each), each with at most m counters bit-packed
// (packed_pairs.h: at most 95 bits a counter, 3.7 bytes measured at e =
// 0.0016), so O((1/e)^2 log(e N)) counters; the young log, at most y
// entries of 12 bytes a young bucket (about 2y/e entries in a steady
// stream), and dead entries at most as many again plus 4096; the aggregate
// map, 16 bytes a slot at load 3/8 to 3/4, one key per item any bucket
// counts; and the buckets of the last tau+1 time units, at most 4m keys
// each. Measured in bench/stream_bench.cc (BM_MemorySite: 22 MiB at
// e = 0.0016, 10^8 items).
// Merging two windows is not offered (see window_count.h). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stream/window/bucket_window.h"
#include "stream/window/flat_count_map.h"
#include "stream/window/misra_gries.h"
#include "stream/window/packed_pairs.h"
#include "stream/window/window_spec.h"
#include "stream/window/young_log.h"

namespace momenta {

struct ItemEstimate {
  int64_t item = 0;
  double count = 0;  // the estimate
  bool operator==(const ItemEstimate&) const = default;
};

struct ItemBounds {
  double low = 0, high = 0;  // low <= c_j <= high
};

class ItemCounts {
 public:
  // InvalidArgument for a bad spec or item_eps outside (0, 1).
  static Result<ItemCounts> Create(const WindowSpec& spec, double item_eps);
  // The synopsis whose Frequent() is correct at eps (item_eps = eps / 3).
  static Result<ItemCounts> ForFrequentItems(const WindowSpec& spec, double eps) { return Create(spec, eps / 3); }

  ItemCounts(ItemCounts&&) noexcept = default;
  ItemCounts& operator=(ItemCounts&&) noexcept = default;

  // Moves the clock to t. REQUIRES: t >= now(), |t| <= kMaxTime
  void AdvanceTo(int64_t t);
  // Counts `count` copies of item stamped ts (a later timestamp moves the
  // clock there first). False, and counted as dropped, when too late.
  // REQUIRES: |ts| <= kMaxTime, 1 <= count <= kMaxBucketItems
  bool Update(int64_t ts, int64_t item, uint64_t count = 1);

  double Count() const { return w_.CountEstimate(); }
  uint64_t CountLow() const { return w_.CountLow(); }
  uint64_t CountHigh() const { return w_.CountHigh(); }
  double Estimate(int64_t item) const;
  ItemBounds Bounds(int64_t item) const;
  // The current bound on |Estimate(j) - c_j| over all j (<= item_eps * c).
  double ErrorBound() const;
  // The part of every item's estimate that does not depend on the item (half
  // the summaries' undercount bounds). An item absent from DrainTouched's
  // list has an estimate that moved by exactly this term's change.
  double SharedTerm() const;
  // Items whose estimate reaches (phi - 1.5 item_eps) * Count(), largest
  // first. REQUIRES: 0 < phi <= 1
  std::vector<ItemEstimate> Frequent(double phi) const;
  // The k items with the largest estimates, largest first (ties by item).
  std::vector<ItemEstimate> Top(size_t k) const;
  // f(item) for every item that may have a nonzero count in the summaries
  // (the aggregate's keys, then the straddler's; an item may repeat).
  template <class F>
  void ForEachCandidate(F&& f) const {
    total_.ForEach([&](int64_t item, uint64_t) { f(item); });
    pending_.ForEach([&](int64_t item, uint64_t) { f(item); });
    if (const auto* h = w_.newest()) h->payload.raw->ForEach([&](int64_t item, uint64_t) { f(item); });
    if (const auto* s = w_.straddler()) s->payload.packed.ForEach([&](int64_t item, uint32_t) { f(item); });
  }

  // Protocols check only what changed. When tracking is on, DrainTouched
  // hands over (and forgets) the items whose estimate may have changed since
  // the last call: `grew` the items that arrived (sorted, unique); `fell` the
  // items whose summary counts went down (reductions, a bucket straddling or
  // expiring; unsorted, may repeat). Relative to SharedTerm()'s change, a
  // `fell` item's estimate only went down; any other item's estimate moved
  // by exactly SharedTerm()'s change.
  // Returns true when more items fell than could be listed (a compaction's
  // cuts can touch most of the window's items): `fell` is then incomplete
  // and the caller must treat any item as fallen.
  void TrackTouched(bool on) { track_ = on; }
  bool DrainTouched(std::vector<int64_t>* grew, std::vector<int64_t>* fell);

  int64_t now() const { return w_.now(); }
  // When the estimates next change with no arrivals (BucketWindow::NextChange).
  int64_t NextChange() const { return w_.NextChange(); }
  double item_eps() const { return item_eps_; }
  size_t counters_per_bucket() const { return m_; }
  const WindowSpec& spec() const { return w_.spec(); }
  uint64_t dropped() const { return dropped_; }
  size_t bucket_count() const { return w_.bucket_count(); }
  size_t MemoryBytes() const;

  std::string Encode() const;
  static Result<ItemCounts> Decode(std::string_view bytes);

 private:
  struct Payload {
    PackedPairs packed;                 // settled, not young: item -> count, <= m pairs
    std::unique_ptr<FlatCountMap> raw;  // unsettled: counts, MG-reduced past 4m keys
    YoungLog<ItemEntry>::Range young;   // settled, young: exact counts in young_
  };
  using Bucket = WindowBucket<Payload>;
  struct Hooks {
    ItemCounts* self;
    void Retire(Bucket& b);
    void Seal(Bucket& b, bool newest);
    void Detach(Bucket& b);
    void Drop(Bucket& b);
    void MergeGroup(Bucket* const* members, size_t count, Bucket& out);
  };
  ItemCounts(const WindowSpec& spec, double item_eps);
  void Cut(const std::vector<ItemDecrement>& cut);
  static bool IsYoung(const Bucket& b) { return b.payload.young.young(); }
  // Appends b's exact entries, unsorted (young) or sorted (packed), to *e.
  void AppendSettled(const Bucket& b, std::vector<ItemEntry>* e) const;
  // Packs a young bucket's entries; its log range becomes dead.
  void PackYoung(Bucket& b);
  void AddToTotal(int64_t item, uint64_t count);
  void FlushPending();
  // Reduces a bucket's exact counts to at most `keep` entries; applies the
  // cuts to the aggregate unless the bucket is the newest; returns v.
  uint32_t ReduceRaw(Bucket& b, size_t keep, bool in_total, std::vector<ItemEntry>* out);
  void Grew(int64_t item) {
    if (track_) grew_.push_back(item);
  }
  void Fell(int64_t item) {
    if (!track_ || fell_overflow_) return;
    if (fell_.size() < kKeepTouched) {
      fell_.push_back(item);
    } else {
      fell_overflow_ = true;  // too many to list: DrainTouched says "any item"
    }
  }

  double item_eps_;
  size_t m_;                 // counters per settled bucket
  BucketWindow<Payload> w_;  // lambda = item_eps
  // item -> its counts summed over the full buckets but the newest: total_
  // plus pending_, a few recent counts on their way into total_ (added in
  // batches of kPendingKeys keys so that total_'s cache misses overlap;
  // flushed before anything is subtracted).
  FlatCountMap total_;
  FlatCountMap pending_;
  static constexpr size_t kPendingKeys = 512;
  std::unique_ptr<FlatCountMap> spare_;  // a settled bucket's map, kept for the next one
  size_t young_items_;                   // y: the most items a young bucket holds
  YoungLog<ItemEntry> young_;
  uint64_t dropped_ = 0;
  bool track_ = false;
  std::vector<int64_t> grew_, fell_;
  bool fell_overflow_ = false;                             // more items fell than fell_ lists
  static constexpr size_t kKeepTouched = size_t{1} << 16;  // entries fell_ lists (and keeps between ticks)
  std::vector<ItemDecrement> scratch_;
  // Reused buffers of Seal and MergeGroup (their capacity counts as memory).
  std::vector<ItemEntry> work_, work2_;
  std::vector<size_t> runs_;
  std::vector<uint32_t> counts_;
  std::vector<uint64_t> sort_words_;
};

}  // namespace momenta
