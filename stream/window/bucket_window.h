// BucketWindow<Payload>: the time structure every window synopsis shares (an
// exponential histogram generalized to bulk and late arrivals; DGIM's
// deterministic bucket rule, applied as a ratio; stream/REFERENCE.md §6.1).
//
// Items live in buckets. A bucket covers the timestamps [min_ts, max_ts] of
// its items, counts them (n) and carries a Payload (nothing for a count, a
// Misra-Gries summary for item counts, a weighted sample for ranks) whose own
// error bound, in items, is `err`.
//
//  - Unsettled buckets hold one timestamp each, for the timestamps that late
//    items may still reach (ts >= now - tau). Arrivals go there. They never
//    straddle the window's edge, because tau < W.
//  - When the clock passes ts + tau a bucket settles: it joins the settled
//    list, ordered by time, newest last, ranges disjoint (buckets of one
//    timestamp may share it: a timestamp with more than kMaxBucketItems
//    items fills several).
//  - Settled buckets are merged in runs (Compact). A merged bucket g always
//    satisfies  n_g <= lambda * newer(g),  where newer(g) counts the items of
//    every bucket newer than g. A bucket of one timestamp needs no rule.
//  - As the clock advances, buckets whose newest item is older than the
//    window are dropped; at most one settled bucket, the oldest, straddles
//    the edge (min_ts <= now-W < max_ts). Everything newer than it is inside
//    the window, so the straddler holds at most lambda*c items for a window
//    of c items: the only uncertainty the time structure adds.
//
// "Full" buckets are the unexpired ones other than the straddler: their
// items are all in the window. full_n() and full_err() sum over them.
//
// The owner passes Hooks to Insert/AdvanceTo/Compact; they keep its payloads
// (and anything it aggregates over them) in step:
//   void Retire(Bucket& b);      // b is no longer the newest unsettled bucket
//   void Seal(Bucket& b, bool newest);
//                                // b settles (newest: it was the newest unsettled
//                                // bucket); may compact b.payload and raise b.err
//   void Detach(Bucket& b);      // b leaves the full set (becomes the straddler or expires)
//   void Drop(Bucket& b);        // b expires (after Detach if it was full)
//   void MergeGroup(Bucket* const* members, size_t count, Bucket& out);
//                                // members oldest first; out gets the merged payload and
//                                // err >= sum of members' err; out's times and n are set
//
// Space: O((1/lambda) * log(lambda * N)) settled buckets for N items in the
// window (measured in bench/stream_bench.cc), plus one bucket per timestamp
// of the last tau+1 time units, plus up to twice that between compactions
// (eight times for buckets of a few items, which cost little; see AdvanceTo).
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "stream/window/sliding_vector.h"
#include "stream/window/window_spec.h"

namespace momenta {

// Items in one bucket stay below 2^31, so payload counts fit 32 bits.
inline constexpr uint64_t kMaxBucketItems = (uint64_t{1} << 31) - 1;

template <class Payload>
struct WindowBucket {
  int64_t min_ts = 0;  // oldest item's timestamp
  int64_t max_ts = 0;  // newest item's timestamp
  uint64_t n = 0;      // items
  double err = 0;      // the payload's error bound, in items (0: exact)
  Payload payload;
};

template <class Payload>
class BucketWindow {
 public:
  using Bucket = WindowBucket<Payload>;

  // REQUIRES: ValidateWindowSpec(spec).ok(), 0 < lambda
  BucketWindow(WindowSpec spec, double lambda) : spec_(spec), lambda_(lambda) {
    assert(spec.window >= 1 && spec.tardiness >= 0 && spec.tardiness < spec.window);
    assert(lambda > 0);
  }
  BucketWindow(BucketWindow&&) noexcept = default;
  BucketWindow& operator=(BucketWindow&&) noexcept = default;

  const WindowSpec& spec() const { return spec_; }
  double lambda() const { return lambda_; }
  // The clock; kNoTime before the first AdvanceTo.
  static constexpr int64_t kNoTime = -kMaxTime;
  int64_t now() const { return now_; }
  // Items stamped <= edge() have expired.
  int64_t edge() const { return now_ - spec_.window; }

  // Adds `count` items stamped ts to its unsettled bucket and returns that
  // bucket, whose payload the caller then updates.
  // REQUIRES: AcceptsArrival(spec(), now(), ts) && ts <= now() && count >= 1
  template <class Hooks>
  Bucket& Insert(int64_t ts, uint64_t count, Hooks& hooks) {
    assert(ts <= now_ && ts >= now_ - spec_.tardiness && count >= 1);
    Bucket& b = OpenBucket(ts, count, hooks);
    b.n += count;
    full_n_ += count;
    return b;
  }
  // The caller raised an unsettled bucket's err by `delta` (its payload was reduced).
  void AddErr(Bucket& b, double delta) {
    b.err += delta;
    full_err_ += delta;
  }

  // Moves the clock to t: settles, expires, and compacts when the settled
  // list has grown twofold (eightfold) since the last compaction.
  // REQUIRES: t >= now(), |t| <= kMaxTime
  template <class Hooks>
  void AdvanceTo(int64_t t, Hooks& hooks) {
    assert(t >= now_ && t <= kMaxTime);
    now_ = t;
    while (!unsettled_.empty() && unsettled_.front().max_ts < now_ - spec_.tardiness) {
      Bucket& b = unsettled_.front();
      const double before = b.err;
      hooks.Seal(b, unsettled_.size() == 1);
      full_err_ += b.err - before;
      unsettled_n_ -= b.n;
      settled_n_since_compact_ += b.n;
      settled_.push_back(std::move(b));
      unsettled_.pop_front();
    }
    const int64_t e = edge();
    while (!settled_.empty() && settled_.front().max_ts <= e) {
      Bucket& b = settled_.front();
      if (straddle_) {
        straddle_ = false;
      } else {
        hooks.Detach(b);
        full_n_ -= b.n;
        full_err_ -= b.err;
      }
      hooks.Drop(b);
      settled_.pop_front();
    }
    if (!settled_.empty() && !straddle_ && settled_.front().min_ts <= e) {
      straddle_ = true;
      hooks.Detach(settled_.front());
      full_n_ -= settled_.front().n;
      full_err_ -= settled_.front().err;
    }
    // A running sum of doubles: subtracting what was added may leave a
    // rounding residue, negative or with no bucket left (the fuzz target
    // `synopsis` saw -1.9e-270 in an empty window). An error bound is >= 0,
    // and 0 without full buckets.
    if (full_n_ == 0 || full_err_ < 0) full_err_ = 0;
    // Buckets of a few items (one item per tick, say) carry almost no
    // payload: compacting them at eightfold rather than twofold makes for
    // fewer passes and merges per item. Buckets of many items compact at
    // twofold (memory).
    const size_t fresh = settled_.size() - std::min(settled_.size(), settled_after_compact_);
    const bool light = settled_n_since_compact_ < kLightItems * fresh;
    if (settled_.size() > (light ? 8 : 2) * settled_after_compact_ + 16) Compact(hooks);
  }

  // One pass from oldest to newest over the full settled buckets, merging
  // each maximal run whose total n stays <= lambda * (items newer than the
  // run), in place. Oldest first keeps the runs stable: a bucket that could
  // not take its newer neighbor last time is not merged again until the
  // items arrived since make room, so each item is merged O(log) times.
  template <class Hooks>
  void Compact(Hooks& hooks) {
    const size_t lo = straddle_ ? 1 : 0;
    runs_.clear();                  // oldest first
    uint64_t after = unsettled_n_;  // items newer than settled_[i], as i goes up
    for (size_t i = lo; i < settled_.size(); ++i) after += settled_[i].n;
    size_t begin = lo;
    while (begin < settled_.size()) {
      size_t end = begin + 1;
      uint64_t g = settled_[begin].n;
      after -= g;
      while (end < settled_.size()) {
        const uint64_t next = g + settled_[end].n, newer = after - settled_[end].n;
        if (static_cast<double>(next) > lambda_ * static_cast<double>(newer) || next > kMaxBucketItems) break;
        g = next;
        after = newer;
        ++end;
      }
      runs_.push_back({begin, end, g});
      begin = end;
    }
    // Bucket `to` <= the run's begin: writing it never touches an unread run.
    size_t to = lo;
    for (auto run = runs_.begin(); run != runs_.end(); ++run, ++to) {
      if (run->end - run->begin == 1) {
        if (to != run->begin) settled_[to] = std::move(settled_[run->begin]);
        continue;
      }
      Bucket merged;
      merged.min_ts = settled_[run->begin].min_ts;
      merged.max_ts = settled_[run->end - 1].max_ts;
      merged.n = run->n;
      double before = 0;
      members_.clear();
      for (size_t i = run->begin; i < run->end; ++i) {
        before += settled_[i].err;
        members_.push_back(&settled_[i]);
      }
      hooks.MergeGroup(members_.data(), members_.size(), merged);
      assert(merged.err >= before - 1e-9 * (1 + before));
      full_err_ += merged.err - before;
      settled_[to] = std::move(merged);
    }
    settled_.erase_to_end(settled_.begin() + to);
    settled_after_compact_ = settled_.size();
    settled_n_since_compact_ = 0;
  }

  // The first clock after now() at which AdvanceTo would change anything
  // (a bucket settles, starts to straddle the edge or expires), or kMaxTime
  // when no bucket is left: between now() and it, with no arrivals, every
  // estimate stays as it is. (A site whose input ended ticks only at these.)
  int64_t NextChange() const {
    int64_t next = kMaxTime;
    if (!unsettled_.empty()) next = std::min(next, unsettled_.front().max_ts + spec_.tardiness + 1);
    if (!settled_.empty()) {
      const Bucket& b = settled_.front();
      next = std::min(next, (straddle_ ? b.max_ts : b.min_ts) + spec_.window);
    }
    return std::max(next, now_ + 1);
  }

  // Items in full buckets, and the sum of their payload errors.
  uint64_t full_n() const { return full_n_; }
  double full_err() const { return full_err_; }
  // The newest unsettled bucket, or null.
  const Bucket* newest() const { return unsettled_.empty() ? nullptr : &unsettled_.back(); }
  Bucket* newest() { return unsettled_.empty() ? nullptr : &unsettled_.back(); }
  // The bucket straddling the window's edge, or null.
  const Bucket* straddler() const { return straddle_ ? &settled_.front() : nullptr; }
  // f(bucket) for every full bucket, oldest first (settled, then unsettled).
  template <class F>
  void ForEachFull(F&& f) const {
    for (size_t i = straddle_ ? 1 : 0; i < settled_.size(); ++i) f(settled_[i]);
    for (const Bucket& b : unsettled_) f(b);
  }
  template <class F>
  void ForEachFullMutable(F&& f) {
    for (size_t i = straddle_ ? 1 : 0; i < settled_.size(); ++i) f(settled_[i]);
    for (Bucket& b : unsettled_) f(b);
  }
  size_t bucket_count() const { return settled_.size() + unsettled_.size(); }
  size_t settled_count() const { return settled_.size(); }
  // Bytes of the bucket records themselves (payload storage is the owner's to add).
  size_t ShellBytes() const { return bucket_count() * sizeof(Bucket); }

  // Lower and upper bounds on the window's item count, and the midpoint.
  // A straddler holds >= 1 expired and >= 1 unexpired item.
  uint64_t CountLow() const { return full_n_ + (straddle_ ? 1 : 0); }
  uint64_t CountHigh() const { return full_n_ + (straddle_ ? settled_.front().n - 1 : 0); }
  double CountEstimate() const {
    return static_cast<double>(full_n_) + (straddle_ ? 0.5 * static_cast<double>(settled_.front().n) : 0);
  }

  // --- for Encode/Decode of the owning synopsis ---
  using List = SlidingVector<Bucket>;
  const List& settled() const { return settled_; }
  const List& unsettled() const { return unsettled_; }
  bool straddling() const { return straddle_; }
  // Rebuilds the state from decoded parts; false when they break an invariant
  // (ranges out of order or overlapping, a bucket of the wrong kind, an
  // unsettled bucket outside [now-tau, now], expired buckets kept).
  bool Restore(int64_t now, List settled, List unsettled) {
    if (now < kNoTime || now > kMaxTime) return false;
    now_ = now;
    const int64_t e = edge();
    for (size_t i = 0; i < settled.size(); ++i) {
      const Bucket& b = settled[i];
      if (b.min_ts > b.max_ts || b.n == 0 || b.n > kMaxBucketItems || b.max_ts <= e) return false;
      if (b.max_ts >= now - spec_.tardiness) return false;
      if (b.min_ts < b.max_ts && b.n < 2) return false;
      if (i > 0 && settled[i - 1].max_ts > b.min_ts) return false;
      if (i > 0 && b.min_ts <= e) return false;  // only the oldest may straddle
      if (!(b.err >= 0) || b.err > static_cast<double>(b.n)) return false;
    }
    for (size_t i = 0; i < unsettled.size(); ++i) {
      const Bucket& b = unsettled[i];
      if (b.min_ts != b.max_ts || b.n == 0 || b.n > kMaxBucketItems) return false;
      if (b.max_ts < now - spec_.tardiness || b.max_ts > now) return false;
      if (i > 0 && unsettled[i - 1].max_ts > b.min_ts) return false;
      if (i > 0 && unsettled[i - 1].max_ts == b.min_ts && unsettled[i - 1].n + b.n <= kMaxBucketItems)
        return false;  // a timestamp splits only when full
      if (!settled.empty() && settled.back().max_ts > b.min_ts) return false;
      if (!(b.err >= 0) || b.err > static_cast<double>(b.n)) return false;
    }
    settled_ = std::move(settled);
    unsettled_ = std::move(unsettled);
    straddle_ = !settled_.empty() && settled_.front().min_ts <= e;
    full_n_ = unsettled_n_ = 0;
    full_err_ = 0;
    for (size_t i = straddle_ ? 1 : 0; i < settled_.size(); ++i) {
      full_n_ += settled_[i].n;
      full_err_ += settled_[i].err;
    }
    for (const Bucket& b : unsettled_) {
      full_n_ += b.n;
      unsettled_n_ += b.n;
      full_err_ += b.err;
    }
    settled_after_compact_ = settled_.size();
    settled_n_since_compact_ = 0;
    return true;
  }

 private:
  template <class Hooks>
  Bucket& OpenBucket(int64_t ts, uint64_t count, Hooks& hooks) {
    if (!unsettled_.empty()) {
      Bucket& back = unsettled_.back();
      if (back.max_ts == ts && back.n + count <= kMaxBucketItems) return Track(back, count);
      if (back.max_ts > ts) return OpenLate(ts, count);
      hooks.Retire(back);
    }
    unsettled_.emplace_back();
    unsettled_.back().min_ts = unsettled_.back().max_ts = ts;
    return Track(unsettled_.back(), count);
  }
  Bucket& OpenLate(int64_t ts, uint64_t count) {
    // Newest bucket with max_ts <= ts; buckets of one timestamp are kept in order.
    auto it = std::upper_bound(unsettled_.begin(), unsettled_.end(), ts,
                               [](int64_t t, const Bucket& b) { return t < b.max_ts; });
    if (it != unsettled_.begin() && std::prev(it)->max_ts == ts && std::prev(it)->n + count <= kMaxBucketItems)
      return Track(*std::prev(it), count);
    it = unsettled_.emplace(it);
    it->min_ts = it->max_ts = ts;
    return Track(*it, count);
  }
  Bucket& Track(Bucket& b, uint64_t count) {
    unsettled_n_ += count;
    return b;
  }

  WindowSpec spec_;
  double lambda_;
  int64_t now_ = kNoTime;
  List settled_;              // oldest first; ranges disjoint and increasing
  List unsettled_;            // one timestamp each, non-decreasing, all >= now - tau
  bool straddle_ = false;     // settled_.front() straddles edge() (and is not full)
  uint64_t full_n_ = 0;       // sum of n over full buckets (settled non-straddler + unsettled)
  double full_err_ = 0;       // sum of err over the same (>= 0; 0 when full_n_ == 0)
  uint64_t unsettled_n_ = 0;  // sum of n over unsettled_
  size_t settled_after_compact_ = 0;
  uint64_t settled_n_since_compact_ = 0;       // items in buckets settled since then
  static constexpr uint64_t kLightItems = 16;  // "a few items" a bucket, on average
  struct Run {
    size_t begin, end;  // settled_[begin, end)
    uint64_t n;
  };
  std::vector<Run> runs_;         // Compact's scratch
  std::vector<Bucket*> members_;  // Compact's scratch
};

}  // namespace momenta
