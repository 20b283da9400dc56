// OlaBuffer: hierarchical overlapped bin buffering (Lemire & Kaser; our notes:
// REFERENCE.md §4, OLA.md). ONE double per bin serves every index moment of
// orders 0..N−1 of any range:
//
//     M_t(p, q) = Σ_{i∈[p,q)} (i − p)^t a_i,   t = 0..N−1
//
// from the telescoped identity (f(x) = (x − p)^t on [p, q), 0 elsewhere;
// V_ℓ(i) the value of level ℓ at point i, V_0 = a; (I_ℓ f)(i) = Σ_l W_{s+l,i}
// f((s+l)·b^(ℓ+1)) the level-ℓ+1 interpolant of f at point i of level ℓ):
//
//     Σ_i f(i) a_i = Σ_j f(j·b^L) V_L(j)
//                  + Σ_{ℓ=0}^{L−1} Σ_{i non-node} ( f(i·b^ℓ) − (I_ℓ f)(i) ) · V_ℓ(i)
//
// where the bracket vanishes except for points whose stencil straddles p or q
// (a window of about N bins per end and level). Only the level-0 windows are
// cells of the array (CellsFor: two runs of about N·b cells); the rest is in
// the buffer. Range moments about p are an IndexMoments (moments.h), from
// which statistics.h's ComputeIndexStat derives sum, count, mean, moment(s),
// com, spread and polyfit.
//
// Numbers. Values are built and updated in long double and stored as double.
// The bound this buffer holds (tests/buffers/ola/ola_accuracy_test.cc checks it,
// OLA.md measures it): for t <= N − 1,
//
//     |M_t − exact| <= 1e-9 · Σ_{i∈[p−R, q+R)} (min(|i − p| + R, q − p))^t |a_i|
//
// with R = N·b^L the reach of the top level's stencils and |a_i| at the
// largest the cell has held, while the levels' growth Λ^L <= kOlaMaxGrowth
// (OlaLayout caps L) and the array's values are finite. (The weights of a
// cell i in the rounding are the largest |f| its stencils see, which is
// min(|i − p| + R, q − p)^t; for a range well inside the array and data
// spread across it the right side is within a small factor of
// 1e-9 · Σ_{[p,q)} |i − p|^t |a_i|.)
//
// Non-finite values are refused (Build, Update): one NaN would spread to
// every value its stencils reach; the default buffer (hbb) counts them apart.
//
// Not thread-safe for writers; const methods may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "buffers/algebra/moments.h"
#include "buffers/algebra/range_summary.h"
#include "buffers/ola/ola_layout.h"
#include "buffers/ola/ola_stencil.h"
#include "storage/util/status.h"

namespace momenta {

class OlaBuffer {
 public:
  // Builds in one pass over the cells of an array of layout.length() cells:
  // Append them in order (any chunking), then Finish.
  class Builder {
   public:
    explicit Builder(const OlaLayout& layout);
    // The next cells.size() cells. InvalidArgument naming the cell when one
    // is not finite, or past the array's length.
    [[nodiscard]] Status Append(std::span<const double> cells);
    // The next `count` cells are zeros (a hole of the file): they add nothing.
    [[nodiscard]] Status AppendZeros(uint64_t count);
    // REQUIRES: all layout.length() cells appended
    OlaBuffer Finish();

   private:
    OlaLayout layout_;
    OlaStencil stencil_;
    // Adds the current bin's sums to acc_ (a bin's non-node cells all go to
    // the same N nodes: summed apart first, N multiply-adds per cell).
    void FlushBin();

    uint64_t next_ = 0;             // cells appended so far
    std::vector<long double> acc_;  // slots, accumulated in long double
    uint64_t bin_ = UINT64_MAX;     // the bin whose non-node cells bin_sums_ holds (none: UINT64_MAX)
    uint64_t bin_first_ = 0;        // its stencil's first node (level 1)
    long double bin_sums_[kOlaNodeLimit] = {};
  };

  // Builds from the whole array in memory.
  static Result<OlaBuffer> Build(const OlaOptions& options, std::span<const double> cells);
  // A buffer from stored slot values (a file's): slots.size() must be layout.slots().
  static Result<OlaBuffer> FromSlots(const OlaLayout& layout, std::vector<double> slots);
  // A buffer over slots kept elsewhere (a mapped file, buffers/ola/ola_file.h):
  // reads and updates go to `slots` in place; nothing is checked or copied.
  // REQUIRES: slots.size() == layout.slots(); the storage outlives the buffer
  static OlaBuffer OverSlots(const OlaLayout& layout, std::span<double> slots) { return OlaBuffer(layout, {}, slots); }

  // Moves keep a view a view, and an owned buffer's view on its own slots.
  OlaBuffer(OlaBuffer&& other) noexcept
      : layout_(std::move(other.layout_)),
        stencil_(other.stencil_),
        owned_(std::move(other.owned_)),
        slots_(other.slots_.data() == owned_.data() ? std::span<double>(owned_) : other.slots_) {}
  OlaBuffer& operator=(OlaBuffer&&) = delete;

  const OlaLayout& layout() const { return layout_; }
  const OlaStencil& stencil() const { return stencil_; }
  std::span<const double> slots() const { return slots_; }
  uint64_t bytes() const { return slots_.size() * sizeof(double); }
  // The slots a query over [p, q) reads besides the array's cells (ascending,
  // possibly overlapping runs): what a file's checks must cover before Answer.
  // REQUIRES: p <= q <= length()
  std::vector<IndexRange> SlotsFor(uint64_t p, uint64_t q) const;

  // The array's cell i changes from old_value to new_value (the caller
  // changes the array): the values whose stencils cover i change by
  // W·(new − old), O(N) points per level, O(N² L) work.
  // InvalidArgument when new_value is not finite; OutOfRange when i >= length.
  // `changed` (optional) receives the slots it changed (appended, unsorted).
  [[nodiscard]] Status Update(uint64_t i, double old_value, double new_value, std::vector<uint64_t>* changed = nullptr);

  // The stored values (level >= 1, point) an update of cell i changes, in
  // level order (what Update(i, ...) stores into). REQUIRES: i < length()
  std::vector<std::pair<int, uint64_t>> PointsOf(uint64_t i) const;
  // Recomputes the values at `points` (in level order, as PointsOf gives
  // them) from the level below, level 1 from the array's cells through
  // `read`: each V_ℓ(j) = V_{ℓ−1}(j·b) + Σ_i W_{j,i} V_{ℓ−1}(i) over the
  // ~2N bins of level ℓ − 1 around it, in long double, stored as double.
  // Exact (to rounding) for the array as `read` gives it, provided the values
  // below that are not recomputed are. `changed` (optional) receives the
  // slots written. InvalidArgument unless the storage is explicit levels (in
  // place does not keep the level below's node points).
  [[nodiscard]] Status Recompute(std::span<const std::pair<int, uint64_t>> points,
                                 const std::function<Status(IndexRange run, double* out)>& read,
                                 std::vector<uint64_t>* changed = nullptr);

  // The runs of array cells a query over [p, q) reads (ascending, disjoint,
  // within [0, length()), possibly empty runs), to be handed to Answer in the
  // same order. REQUIRES: p <= q <= length()
  std::vector<IndexRange> CellsFor(uint64_t p, uint64_t q) const;
  // M_t(p, q), t = 0..N−1, as an IndexMoments of order N − 1 and count q − p.
  // cells[k] holds the values of CellsFor(p, q)[k].
  // REQUIRES: p <= q <= length(); cells as described
  IndexMoments Answer(uint64_t p, uint64_t q, std::span<const std::span<const double>> cells) const;

  // The telescoped sum cut at level k = first_level (1..L): the top level's
  // nodes plus the corrections of levels k..L−1 only, reading no cell:
  //
  //     A_k(t) = Σ_{level-k points i} f_t(i·b^k) V_k(i) = Σ_c (P_k h_k)(c) a_c
  //
  // where h_k is f_t sampled at level k's points and P_k interpolates it down
  // to the cells through the levels' stencils (V_k = P_k^T a). The rest,
  // M_t − A_k = Σ_c (f_t − P_k h_k)(c) a_c, is zero except for cells within
  // (N − 1)·Σ_{ℓ=1..k} b^ℓ of p or q (ola_refine.h bounds it). A_L is the
  // coarsest (top level alone), A_1 the finest without cells, and Answer is A_0.
  // REQUIRES: p <= q <= length(), 1 <= first_level <= levels()
  IndexMoments AnswerAbove(uint64_t p, uint64_t q, int first_level) const;

  // CellsFor, one read per run, Answer. read(run, out) fills out[0, run.size()).
  using CellReader = std::function<Status(IndexRange run, double* out)>;
  Result<IndexMoments> Query(uint64_t p, uint64_t q, const CellReader& read) const;

 private:
  OlaBuffer(const OlaLayout& layout, std::vector<double> owned, std::span<double> view = {})
      : layout_(layout),
        stencil_(layout.nodes(), layout.bin()),
        owned_(std::move(owned)),
        slots_(view.data() ? view : std::span<double>(owned_)) {}

  // A delta at cell i carried up the levels: store(level, point, d) for every
  // stored value it changes (levels >= 1), in level order.
  void Propagate(uint64_t i, long double delta, const std::function<void(int, uint64_t, long double)>& store) const;
  // Answer's sum over levels first_level..L (cells: level 0's, when first_level is 0).
  IndexMoments Accumulate(uint64_t p, uint64_t q, int first_level,
                          std::span<const std::span<const double>> cells) const;
  // Bins k (of level+1) whose non-node points may need a correction for a
  // query over [p, q): sorted disjoint closed intervals within [0, m − 1].
  std::vector<std::pair<uint64_t, uint64_t>> Windows(int level, uint64_t p, uint64_t q) const;

  OlaLayout layout_;
  OlaStencil stencil_;
  std::vector<double> owned_;  // the slots when this buffer holds them (Build, FromSlots)
  std::span<double> slots_;    // layout_.slots() values (see OlaLayout for what each holds): owned_ or a view
};

}  // namespace momenta
