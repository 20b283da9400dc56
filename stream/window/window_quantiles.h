// WindowQuantiles: ranks and quantiles of the items in the sliding window
// (items are int64 values: an index, a bucket of indices, a value on a grid),
// in memory that does not grow with the number of items in the window (an
// exponential histogram of weighted samples; bucket_window.h, value_sample.h).
//
// Guarantees at every clock value, for a window of c items:
//   - |Rank(x) - #{items <= x}| <= RankErrorBound() <= eps*c for every x;
//   - Quantile(phi) returns a value whose rank range [#{< v}+1, #{<= v}]
//     meets [phi*c - eps*c, phi*c + eps*c] (up to one rank of rounding; a
//     value no longer in the window counts as lying between its neighbors);
//   - |Count() - c| <= 0.4*eps*c.
// How: buckets merge while n_b <= lambda*(items newer than b), lambda = 0.8 eps,
// so the straddling bucket holds at most 0.8 eps c items, half of which the
// midpoint estimate may misplace; each bucket's sample may misplace ranks by
// at most gamma*n_b, gamma = eps/2, a budget it spends when it collapses its
// sample (value_sample.h) to about m = ceil(2/gamma) entries. The budget is
// enforced per bucket, so the bound holds whatever the merge history; the
// number of entries kept is what adapts (measured in bench/stream_bench.cc).
// A bucket whose budget is spent keeps its entries, up to a hard cap of 32m:
// past it the sample is collapsed to 2m entries anyway, so memory is
// O((1/eps)^2 log(eps N)) entries whatever happens (32m = 128/eps a bucket,
// O((1/eps) log(eps N)) buckets). Such a collapse is counted
// (over_budget_collapses) and its error still enters RankErrorBound(), which
// may then exceed eps*c; no test or benchmark has produced one. Settled
// samples are bit-packed (packed_pairs.h: at most 95 bits an entry, about 4
// bytes measured); Snapshot merges them in place (memory for its result only).
// Young buckets (young_log.h) of at most min(2m, 256) items, which no collapse
// touches, keep their exact entries in a shared log until a merge passes that
// size, so one item per tick is not sorted and packed at every merge level.
// Merging two windows is not offered (see window_count.h). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stream/window/bucket_window.h"
#include "stream/window/packed_pairs.h"
#include "stream/window/value_sample.h"
#include "stream/window/window_spec.h"
#include "stream/window/young_log.h"

namespace momenta {

// The estimated rank function of a window frozen at one moment, for asking
// many ranks at once (the quantile protocols' checks).
class RankSnapshot {
 public:
  bool empty() const { return values_.empty(); }
  double total() const { return cum_.empty() ? 0 : cum_.back(); }
  // Estimated #items <= x and #items < x.
  double Rank(int64_t x) const;
  double RankBelow(int64_t x) const;
  // The smallest sampled value whose estimated rank reaches target, or the
  // largest when none does; nullopt when empty.
  std::optional<int64_t> ValueAtRank(double target) const;
  const std::vector<int64_t>& values() const { return values_; }

 private:
  friend class WindowQuantiles;
  std::vector<int64_t> values_;  // distinct, ascending
  std::vector<double> cum_;      // estimated rank of values_[i] (#items <= it)
};

class WindowQuantiles {
 public:
  // InvalidArgument for a bad spec or eps outside (0, 1).
  static Result<WindowQuantiles> Create(const WindowSpec& spec, double eps);

  WindowQuantiles(WindowQuantiles&&) noexcept = default;
  WindowQuantiles& operator=(WindowQuantiles&&) noexcept = default;

  // Moves the clock to t. REQUIRES: t >= now(), |t| <= kMaxTime
  void AdvanceTo(int64_t t);
  // Adds `count` copies of value stamped ts (a later timestamp moves the
  // clock there first). False, and counted as dropped, when too late.
  // REQUIRES: |ts| <= kMaxTime, 1 <= count <= kMaxBucketItems
  bool Update(int64_t ts, int64_t value, uint64_t count = 1);

  double Count() const { return w_.CountEstimate(); }
  uint64_t CountLow() const { return w_.CountLow(); }
  uint64_t CountHigh() const { return w_.CountHigh(); }
  // Estimated #items <= x.
  double Rank(int64_t x) const;
  // The current bound on |Rank(x) - true rank| over all x (<= eps * c).
  double RankErrorBound() const;
  // nullopt when the window is empty. REQUIRES: 0 <= phi <= 1
  std::optional<int64_t> Quantile(double phi) const;
  RankSnapshot Snapshot() const;

  int64_t now() const { return w_.now(); }
  // When the estimates next change with no arrivals (BucketWindow::NextChange).
  int64_t NextChange() const { return w_.NextChange(); }
  double eps() const { return eps_; }
  const WindowSpec& spec() const { return w_.spec(); }
  uint64_t dropped() const { return dropped_; }
  size_t bucket_count() const { return w_.bucket_count(); }
  size_t entry_count() const;
  // Collapses past the error budget forced by the entry cap (see above).
  uint64_t over_budget_collapses() const { return over_budget_; }
  size_t MemoryBytes() const;

  std::string Encode() const;
  static Result<WindowQuantiles> Decode(std::string_view bytes);

 private:
  struct Payload {
    PackedPairs packed;                 // settled: the sample, value -> weight
    std::vector<ValueEntry> entries;    // unsettled: normalized sample
    std::vector<ValueEntry> raw;        // unsettled: arrivals not yet absorbed (unsorted)
    YoungLog<ValueEntry>::Range young;  // settled, young: the exact sample in young_
  };
  using Bucket = WindowBucket<Payload>;
  struct Hooks {
    WindowQuantiles* self;
    void Retire(Bucket&) {}
    void Seal(Bucket& b, bool newest);
    void Detach(Bucket& b);
    void Drop(Bucket&) {}
    void MergeGroup(Bucket* const* members, size_t count, Bucket& out);
  };
  WindowQuantiles(const WindowSpec& spec, double eps);
  // Absorbs b's raw arrivals and collapses its sample when it holds more
  // than 2m entries and its error budget allows; returns the error added.
  double Tidy(Bucket& b);
  // Collapses a normalized sample of n items whose error is err, as Tidy.
  double Collapse(std::vector<ValueEntry>* e, uint64_t n, double err);
  // A young bucket's sample, normalized, in *e (replaced); *scratch as NormalizeSample's.
  void YoungSample(const Payload& p, std::vector<ValueEntry>* e, std::vector<uint64_t>* scratch) const;

  double eps_;
  double gamma_;  // per-bucket sample error budget, fraction of n_b
  size_t m_;      // entries a collapse aims for
  BucketWindow<Payload> w_;
  uint64_t dropped_ = 0;
  uint64_t over_budget_ = 0;
  std::vector<ValueEntry> work_;      // MergeGroup's buffer (its capacity counts as memory)
  std::vector<uint64_t> sort_words_;  // the sort's scratch (key_count_sort.h; counts as memory)
  size_t young_items_;                // the most items a young bucket holds: min(2m, 256), never collapsed
  YoungLog<ValueEntry> young_;
};

}  // namespace momenta
