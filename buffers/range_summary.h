// RangeSummary: everything the moment buffer knows about one run of cells —
// its index moments, value moments, extremes and, for integer dtypes, its
// exact integer sum — and the fixed binary form a tree node stores it in.
//
// A node of order J is NodeCodec(J).doubles() doubles (8-byte slots):
//
//   slot                        what
//   [0, J]                      index moments M_0..M_J about the run's start (double part)
//   [J+1, 2J+1]                 their residues (M_j = value + residue exactly in long double)
//   2J+2, 2J+3, 2J+4            value moments: shift K, S1 = Σ(a−K), S2 = Σ(a−K)²
//   2J+5, 2J+6                  min, max
//   2J+7, 2J+8                  exact integer sum, an __int128 (0 for float dtypes)
//
// The run's count is not stored: the tree layout knows every node's span.
// Residues make the stored index moments as exact as the long double they came
// from, so 10^6 incremental updates stay inside the accuracy bound at any J
// (see buffers/moments.h, "Updates").
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

// The stored form of a node of a given order.
class NodeCodec {
 public:
  explicit NodeCodec(int order) : order_(order) {}
  int order() const { return order_; }
  size_t doubles() const { return 2 * static_cast<size_t>(order_) + 9; }
  size_t bytes() const { return doubles() * sizeof(double); }

  void Encode(const RangeSummary& s, double* node) const;
  RangeSummary Decode(const double* node, uint64_t count) const;

  // In-place update of one cell of a stored node: value old -> new at `offset`
  // within the node's run of `count` cells. Extremes are widened when the new
  // value exceeds them; returns false when the old value was an extreme that
  // may have shrunk (the caller must then recompute the node's extremes).
  // `exact_delta` is new − old as an integer (integer dtypes), else 0.
  bool ApplyUpdate(double* node, uint64_t count, uint64_t offset, double old_value,
                   double new_value, Int128 exact_delta) const;

  // The extremes stored in a node; and writes new ones.
  Extremes GetExtremes(const double* node) const;
  void SetExtremes(double* node, const Extremes& e) const;

 private:
  const int order_;
};

}  // namespace momenta
