// Sound bounds on a range's sum of squares Σ a² (and its rms) from the pieces
// a progressive query holds (range_bounds.h: the whole nodes, the partial end
// leaves and the cells read of them): `momenta query --stat sumsq|rms
// --progressive`.
//
// A node's finite Σa² is Σ(a − μ)² + f·μ² (μ its mean over its f finite
// cells; for integer dtypes f·μ² = (Σa)²/f from the exact sum): two terms
// >= 0, so nothing cancels. Its allowance, in the terms of the buffer's bound
// (DESIGN.md §5; range_bounds.h, "Soundness"): S2 = Σ(a − K)² within ε of its
// magnitude and S1 = Σ(a − K) within ε of Σ|a − K|, the magnitudes taken over
// the values the cells have held since the node was computed from data, all of
// which lie within the node's min and max (f · D² and f · D, D the largest
// |extreme − K|), or, on a fresh build, over the values as they are (S2 itself
// and sqrt(f · S2)). Then Σa² = S2 + 2K·S1 + f·K² is within
// e2 + 2|K|·e1 + (2|S1| + e1)·e1/f, plus the long-double rounding.
//
// A partial leaf of n cells, u of its unread cells inside and v outside, the
// unread finite cells' Σa² being Q_r (the leaf's less the cells read): with
// every finite cell's square in [s, S] (S = max(min², max²); s = 0 when
// min <= 0 <= max, else min(min², max²)) the unread inside part lies in
//   direct       k_lo·s <= inside <= k_hi·S
//   complement   Q_r − o_hi·S <= inside <= Q_r − o_lo·s
// (k, o: how many unread finite cells lie inside, outside), the tightest taken,
// never below 0. NaN and infinities as np.sum(x**2): a NaN inside makes it NaN
// (certain, or possible: NanState), an infinity of either sign +inf.
#pragma once

#include <cstdint>
#include <span>

#include "buffers/algebra/range_bounds.h"
#include "buffers/algebra/range_summary.h"

namespace momenta {

// A node's finite Σa² and the allowance around it (above).
struct NodeSquaresBound {
  long double value = 0;
  long double slack = 0;
};
NodeSquaresBound NodeSquares(const RangeSummary& node, bool fresh);

// The bound on Σ a² over the range (a float bound, also for integer dtypes).
SumBound BoundSumOfSquares(const WholeNodes& whole, std::span<const PartialLeaf> ends);
// The bound on sqrt(Σ a² / count), from the bound on Σ a². REQUIRES: count > 0
SumBound BoundRms(const SumBound& sumsq, uint64_t count);

}  // namespace momenta
