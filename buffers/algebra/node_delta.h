// NodeDelta: the change of several cells of one node, gathered so the node
// is updated once per chunk of updates instead of once per cell
// (TreeMaintenance::ApplyGathered, NodeCodec::ApplyDelta).
//
// For distinct cells at offsets r_k of the node's run, each changing from a
// finite o_k to a finite n_k (Δ_k = n_k − o_k), about a value shift K:
//
//   index[t]  = Σ_k Δ_k · r_k^t                      (t = 0..J)
//   s1        = Σ_k (n_k − K) − (o_k − K)            = Σ Δ_k
//   s2        = Σ_k (n_k − K)² − (o_k − K)²          = Σ Δ_k (n_k + o_k − 2K)
//   s2_magnitude = Σ_k |(n_k − K)² − (o_k − K)²|,  delta_magnitude = Σ_k |Δ_k|
//   exact     = Σ_k (n_k − o_k) and Σ_k n_k² − o_k² as integers (integer dtypes; else 0)
//   extremes of the new values and of the old ones
//
// all sums in long double, in the order the cells were added. Everything is
// linear in the cells, so a parent's delta is the sum of its children's,
// each moved to the parent's frame:
//   ShiftedBy(δ):  index[t] <- Σ_u C(t,u) δ^(t−u) index[u]   (δ = child start − parent start)
//   Rebased(K'):   s2 <- s2 + 2(K − K')·s1,  s2_magnitude <- s2_magnitude + 2|K − K'|·delta_magnitude
// (the (K − K')² terms cancel between n_k and o_k). Both only add positive
// terms of the magnitudes the direct sums have (r, δ >= 0), so their rounding
// is a few ulps of those magnitudes (buffers/algebra/moments.h, "Numerics").
//
// Rounding against one cell at a time: a node updated once per change
// rounds each sum at its running magnitude per change; gathered, the m
// changes of a chunk are summed first (at most m·2^-64 of Σ|terms|) and
// added once. ApplyDelta charges the node's drift with that (see there).
#pragma once

#include <cstdint>
#include <limits>

#include "buffers/algebra/moments.h"
#include "buffers/algebra/range_summary.h"

namespace momenta {

// One cell's change as the tree sees it. REQUIRES (for gathering): both
// values finite; exact = new − old and new² − old² as integers for integer
// dtypes, else 0.
struct CellChange {
  uint64_t index = 0;
  double old_value = 0;
  double new_value = 0;
  ExactChange exact;
};

struct NodeDelta {
  MomentTerms index{};
  long double s1 = 0;
  long double s2 = 0;
  long double s2_magnitude = 0;
  long double delta_magnitude = 0;
  double shift = 0;  // K the s2 sums are about
  uint64_t changes = 0;
  ExactChange exact;
  double new_min = std::numeric_limits<double>::infinity();
  double new_max = -std::numeric_limits<double>::infinity();
  double old_min = std::numeric_limits<double>::infinity();
  double old_max = -std::numeric_limits<double>::infinity();
  uint64_t new_children = 0;  // bits of children that were holes before this delta (parents only)

  NodeDelta() = default;
  explicit NodeDelta(double k) : shift(k) {}

  // Adds the change of the cell at `offset` of the node's run (order J).
  void Add(int order, uint64_t offset, const CellChange& c);
  // Adds `child` (a delta of a node starting `offset` cells after this
  // node's start), moved to this node's frame. REQUIRES: equal orders
  void AddChild(int order, uint64_t offset, const NodeDelta& child);
  // The same change with its s2 sums about k instead of `shift`.
  void RebaseTo(double k);
};

}  // namespace momenta
