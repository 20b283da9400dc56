// RangeSummary: everything the moment buffer knows about one run of cells —
// its index moments, value moments, extremes and, for integer dtypes, its
// exact integer sum — and the fixed binary form a tree node stores it in.
//
// A node of order J is NodeCodec(J).doubles() = 2J + 12 doubles (8-byte slots;
// 128 bytes at the default J = 2):
//
//   slot                        what
//   [0, J]                      index moments M_0..M_J about the run's start (double part)
//   [J+1, 2J+1]                 their residues (M_j = value + residue exactly in long double)
//   2J+2                        value shift K
//   2J+3, 2J+4                  S1 = Σ(a−K): double part, residue
//   2J+5, 2J+6                  S2 = Σ(a−K)²: double part, residue
//   2J+7, 2J+8                  min, max
//   2J+9, 2J+10                 exact integer sum, an __int128 (0 for float dtypes)
//   2J+11                       drift: a bound on the rounding error S2 has gathered
//                               from incremental updates since it was last computed
//                               from data (0 after a build or refresh)
//
// The run's count is not stored: the tree layout knows every node's span. An
// all-zero node is exactly the summary of a run of zeros, so a sparse tree
// file describes a sparse array without being written.
//
// Residues keep every stored sum as exact as the long double it came from.
// Incremental updates still round at the magnitude of the sums at the time
// (2^-64 each): when the data's spread shrinks by many orders (zeros replaced
// by 1e6 ± 1), that old rounding can exceed the accuracy the variance needs.
// The drift slot tracks it; ApplyUpdate reports when a node should be
// recomputed from its data (kDriftLimit of its central sum of squares).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "buffers/moments.h"
#include "storage/dtype.h"

namespace momenta {

// Exact sums of integer elements: 2^64 elements of 2^63 still fit.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

struct RangeSummary {
  IndexMoments index;
  ValueMoments values;
  Extremes extremes;
  Int128 exact_sum = 0;  // Σ a_i for integer dtypes, else 0

  explicit RangeSummary(int order = 0) : index(order) {}
  uint64_t count() const { return index.count(); }

  // The summary of `count` elements of dtype `t` stored at `bytes`
  // (little-endian). `scratch` must hold `count` doubles.
  static RangeSummary OfElements(int order, DType t, const char* bytes, size_t count,
                                 double* scratch);
};

// `left` followed by `right` (index moments shift by left.count()).
RangeSummary Merge(const RangeSummary& left, const RangeSummary& right);
// Inverses of Merge for the invertible parts; extremes are NOT recovered
// (the result's extremes are empty: callers that need min/max read the side).
RangeSummary UnmergeRight(const RangeSummary& total, const RangeSummary& left);
RangeSummary UnmergeLeft(const RangeSummary& total, const RangeSummary& right);

// Relative drift (of a node's central sum of squares) past which an update
// asks for the node to be recomputed from data.
inline constexpr long double kDriftLimit = 1e-12L;

// The stored form of a node of a given order.
class NodeCodec {
 public:
  explicit NodeCodec(int order) : order_(order) {}
  int order() const { return order_; }
  size_t doubles() const { return 2 * static_cast<size_t>(order_) + 12; }
  size_t bytes() const { return doubles() * sizeof(double); }

  void Encode(const RangeSummary& s, double* node) const;
  RangeSummary Decode(const double* node, uint64_t count) const;

  // In-place update of one cell of a stored node: value old -> new at `offset`
  // within the node's run of `count` cells. `exact_delta` is new − old as an
  // integer (integer dtypes), else 0. Extremes are widened when the new value
  // exceeds them.
  struct UpdateOutcome {
    bool extremes_may_shrink = false;  // the old value was an extreme: recompute extremes
    bool drifted = false;              // rounding drift past kDriftLimit: recompute the node
  };
  UpdateOutcome ApplyUpdate(double* node, uint64_t count, uint64_t offset, double old_value,
                            double new_value, Int128 exact_delta) const;

  // The extremes stored in a node; and writes new ones.
  Extremes GetExtremes(const double* node) const;
  void SetExtremes(double* node, const Extremes& e) const;

 private:
  const int order_;
};

}  // namespace momenta
