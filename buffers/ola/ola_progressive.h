// OlaProgressiveSum: a progressive sum over [p, q) on an array whose buffer
// kind is ola, refined coarse to fine through the Ola buffer's levels (the
// telescoped identity, ola_buffer.h's AnswerAbove), reading no array cell
// until the caller's ordinary query gives the exact answer.
//
// Start() takes the order-0 tree's first bound (ProgressiveSum::Start: the
// whole nodes and the partial end leaves, nothing read from the array: the
// quickest first line); each Next() the bound at the next level, from the top
// level L down to level 1. The bound at level k (OLA.md, "Progressive answers"):
//
//     Σ_{[p,q)} a = A_k + Σ_{c∈D_k} w_c a_c                  (ola_refine.h)
//
//   A_k   the levels' sum cut at k, from the Ola slots (each block checked)
//   w_c   computed exactly, cell by cell, when D_k (the cells within R_k of
//         p or q) holds at most kExactWeightCells cells: then Σ w_c a_c lies in
//         Σ_c [min(w_c·lo, w_c·hi), max(w_c·lo, w_c·hi)], [lo, hi] the min and
//         max of c's tree leaf; else |w_c| <= (1 + Λ^k)/2 gives
//         ±(1 + Λ^k)/2 · Σ_leaves |leaf ∩ D_k| · max|a|
//   plus  the Ola buffer's own accuracy, 1e-9 · Σ_{[p−R, q+R)} |a| (R = N·b^L,
//         ola_buffer.h), with |a| from the tree's extremes (after updates:
//         the largest |a| held, below), and 1e-15 of the
//         magnitudes for the long-double arithmetic; rounded outward.
//
// Each bound is intersected with the previous one (NarrowBound), so the
// intervals never widen. The estimate is A_k + Σ_c w_c·(leaf mean) where the
// weights are exact, else A_k, clamped into the interval.
//
// When the levels are not used, and why: the tree's bound alone (then this
// is exactly ProgressiveSum, reading the partial leaves) when `ola` is null,
// the dtype is an integer (the tree's sums are exact), the range is empty,
// the tree's bound is not finite or a NaN may be inside, or the array has
// taken updates since its build and the Ola header's max_abs_held is not a
// finite magnitude (damage). The Ola buffer's accuracy is stated for |a| at
// the largest each cell has held: on a fresh build (updates_since_build == 0,
// read under the seqlock with the slots) the tree's extremes bound it leaf by
// leaf; after updates, which may have replaced a spike by a small value, it
// is bounded by max_abs_held for every cell of the reach — sound, and wider
// where the array once held a value far above the rest.
//
// Each bound is taken under the tree header's seqlock (the Ola slots change
// inside it too), so it holds for one state of the array; under concurrent
// updates successive bounds may describe different states (as for
// ProgressiveSum). Not thread-safe; one object per query.
#pragma once

#include <cstdint>

#include "buffers/algebra/range_bounds.h"
#include "buffers/ola/ola_file.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/progressive_sum.h"
#include "storage/array/array_file.h"

namespace momenta {

class OlaProgressiveSum {
 public:
  // D_k up to this many cells gets its weights cell by cell (~N multiply-adds a cell).
  static constexpr uint64_t kExactWeightCells = uint64_t{1} << 17;

  // REQUIRES: p <= q <= array.length(); tree (and ola, when not null)
  // describe array; all outlive this object.
  OlaProgressiveSum(MomentTree& tree, const OlaFile* ola, ArrayFile& array, uint64_t p, uint64_t q,
                    IoBackend* array_io = nullptr);

  // The first bound, reading nothing of the array. Corruption (naming the
  // file) when a tree node or an Ola block fails its check.
  Result<SumBound> Start();
  bool done() const { return levels_ ? next_level_ == 0 : tree_sum_.done(); }
  // The next bound. REQUIRES: Start() succeeded and !done()
  Result<SumBound> Next();

  // Whether the bounds come through the Ola levels (decided by Start).
  bool through_levels() const { return levels_; }
  // The level the last bound was cut at (L..1), 0 when not through the levels.
  int level() const { return level_; }
  uint64_t array_bytes_read() const { return tree_sum_.array_bytes_read(); }

 private:
  // The bound at level k, from the Ola slots and the tree's leaves, under the seqlock.
  Result<SumBound> LevelBound(int k);
  Result<SumBound> LevelBoundOnce(int k);
  // No update since the build: the tree's extremes bound what cells have held.
  bool FreshBuild() const;
  // Σ|a| over [begin, end) bounded from the tree's nodes: Σ count · max|a|.
  Result<long double> AbsBound(uint64_t begin, uint64_t end) const;
  static constexpr int64_t kSeqlockPatienceNs = 5'000'000'000;

  MomentTree& tree_;
  const OlaFile* ola_;
  ArrayFile& array_;
  const uint64_t p_, q_;
  ProgressiveSum tree_sum_;
  bool levels_ = false;
  int next_level_ = 0;  // the level Next takes (0: none left)
  int level_ = 0;
  SumBound last_;
};

}  // namespace momenta
