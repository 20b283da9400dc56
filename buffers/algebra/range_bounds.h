// Sound bounds on the sum of a range [p, q) from what the moment buffer's
// nodes hold, before (or while) the two partial end leaves are read: the
// first answer of a progressive query (`momenta query --progressive`).
//
// The range is three kinds of pieces: whole nodes (their sums are known), and
// up to two partial leaves, of which only some cells lie inside the range.
// For a partial leaf of n cells, k of them inside, what bounds the inside sum:
//
//   direct       k·min        <= inside <= k·max
//   complement   S − (n−k)·max <= inside <= S − (n−k)·min      (S: the leaf's sum)
//   spread       |inside − k·μ| <= sqrt(k·(n−k)·C/n)            (μ: the leaf's mean,
//                                                                C: Σ(a − μ)² over the leaf)
//
// and the tightest of the three is taken (the spread bound holds because the
// deviations a − μ sum to 0 over the leaf: the inside ones are minus the
// outside ones, and Cauchy–Schwarz bounds each side). As cells of a leaf are
// read (KnownCells), the same three bounds apply to the cells not yet read.
//
// Soundness in floating point. The interval always contains the exact sum
// (of the cells as they are, in exact arithmetic) provided the buffer meets
// its stated accuracy (DESIGN.md §5): a node's stored finite sum is within
// kNodeSumRelativeError · Σ|a| of the exact sum of its f finite cells, |a|
// at the largest each has held since the node was computed from data (at
// most f · max|a| from the node's min and max; for a node fresh from a
// build, also ±S + 2f·max(0, ∓extreme)), its Σ(a − K) and Σ(a − K)² within
// the same fraction of their magnitudes. Every long double operation's
// rounding is then bounded (each bound is a few operations on terms whose
// magnitudes are tracked: at most 8 · 2^-64 of them, taken outward), and the
// result is rounded outward to double (nextafter), so what is printed is
// sound too. Integer dtypes use the nodes' exact sums and exact integer
// arithmetic; their min/max are doubles, rounded outward beyond 2^53.
//
// NaN and infinity, as `momenta query` answers the sum (np.sum): a NaN
// inside, or both infinities, make it NaN; an infinity makes it ±inf. Each
// node counts its NaN, +inf and −inf cells exactly, so the counts inside the
// range are known to an interval: a NaN certainly inside gives a NaN answer
// (NanState::kCertain, estimate and bounds NaN); a NaN possibly inside is
// flagged (kMaybe: the answer is NaN or lies in [lower, upper]); +inf
// possibly inside makes upper +inf (−inf: lower −inf); +inf certainly inside
// (and −inf not) gives lower = upper = +inf, flagged kMaybe when a NaN or a
// −inf may be inside too.
#pragma once

#include <cstdint>
#include <span>

#include "buffers/algebra/moments.h"
#include "buffers/algebra/range_summary.h"
#include "storage/npy/dtype.h"

namespace momenta {

// The accuracy a node's stored sums are taken to have (the buffer's bound,
// DESIGN.md §5), relative to f · max|a| over the node's finite cells.
inline constexpr long double kNodeSumRelativeError = kReferenceRelativeError;

enum class NanState { kNo, kMaybe, kCertain };

// What is known of Σ a_i over a range. Unless nan is kCertain:
// lower <= exact <= upper, or the exact answer is NaN and nan is kMaybe.
// estimate lies in [lower, upper] (a guess: whole nodes, plus for a leaf not
// yet read the integral over its inside of the least-squares polynomial of
// degree min(J, 2) its index moments give, else the unread cells' share of
// their leaf's sum).
struct SumBound {
  double estimate = 0;
  double lower = 0;
  double upper = 0;
  NanState nan = NanState::kNo;
  bool exact = false;  // no cell of the range is unaccounted for: the interval is rounding only
  // Integer dtypes: the same, exactly (lower, upper, estimate are these rounded outward / to nearest).
  bool is_integer = false;
  Int128 int_estimate = 0, int_lower = 0, int_upper = 0;
};

// Cells of a partial leaf that have been read: their exact contribution, and
// what the bounds on the leaf's other cells need taken out of the leaf.
struct KnownCells {
  uint64_t count = 0;
  long double finite_sum = 0;  // Σ a over the finite cells, in long double, in order
  long double finite_abs = 0;  // Σ |a| over them (the scale of finite_sum's rounding)
  long double dev_sum = 0;     // Σ (a − K) about the leaf's shift K
  long double dev_abs = 0;     // Σ |a − K|
  long double dev_sq = 0;      // Σ (a − K)²
  long double finite_sq = 0;   // Σ a² over the finite cells, in order (square_bounds.h)
  NonFiniteCounts nonfinite;
  Int128 exact_sum = 0;  // integer dtypes
  // One more cell, value v of the leaf whose value shift is `shift`.
  void Add(const Value& v, double shift);
};

// A partial end leaf: its stored summary, how many of its cells lie inside the
// range, and the cells read so far on each side.
// REQUIRES: 0 < inside < leaf.count(); known_inside.count <= inside;
// known_outside.count <= leaf.count() − inside
struct PartialLeaf {
  RangeSummary leaf;
  uint64_t leaf_index = 0;    // which leaf (for the caller's reads)
  bool fresh = false;         // no incremental update since the build (tighter allowance: range_bounds.cc)
  uint64_t inside_first = 0;  // offset in the leaf of the first cell inside (the inside is contiguous)
  uint64_t inside = 0;
  KnownCells known_inside, known_outside;
  // Every cell inside, or every cell outside, has been read: the inside sum is determined.
  bool determined() const { return known_inside.count == inside || known_outside.count == leaf.count() - inside; }
};

// The whole nodes inside the range, added one at a time.
struct WholeNodes {
  bool fresh = false;  // set before Add: no incremental update since the build (range_bounds.cc)
  uint64_t count = 0;
  long double finite_sum = 0;    // Σ of the nodes' stored finite sums
  long double slack = 0;         // Σ kNodeSumRelativeError · f · max|a|, plus the rounding of the sum
  long double magnitude = 0;     // Σ |stored sum|
  long double finite_sumsq = 0;  // Σ of the nodes' finite Σa² (square_bounds.h: NodeSquares)
  long double sumsq_slack = 0;   // Σ of their allowances, plus the rounding of the sum
  NonFiniteCounts nonfinite;
  Int128 exact_sum = 0;
  void Add(const RangeSummary& node);
};

// The bound on the range's sum: whole nodes plus the partial leaves.
SumBound BoundSum(const WholeNodes& whole, std::span<const PartialLeaf> ends, DType dtype);
// The bound on the mean of a range of `count` cells whose sum is bounded by
// `sum` (np.mean: NaN and infinities as the sum's). REQUIRES: count > 0
SumBound BoundMean(const SumBound& sum, uint64_t count);

// x rounded to a double not above it, and not below it (outward rounding).
double DoubleBelow(long double x);
double DoubleAbove(long double x);

}  // namespace momenta
