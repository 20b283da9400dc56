// The moment algebra: what the buffer stores per bin and merges at query time.
//
// Three small value types, each with the same shape (Of / Append / Merge):
//
//   IndexMoments   count w and M_j = Σ_{x=0}^{w-1} x^j · a_{s+x}, j = 0..J,
//                  about the run's own start s (the tuple never knows s).
//                  Linear and invertible: merge, un-merge, shift, update.
//   ValueMoments   count n, shift K, Σ(a − K), Σ(a − K)²: mean and variance
//                  that survive a large mean. Invertible: merge, un-merge, update.
//   Extremes       min and max. Mergeable, not invertible.
//
// and the statistics a range query derives from them (sum, mean, var, std,
// moment about c, center of mass, spread, polynomial fit).
//
// Conventions. A run is a contiguous half-open range of cells [s, s + w);
// positions inside it are offsets x = i − s. A range tuple for a query over
// [p, q) is a run tuple with s = p. Order J is chosen at run time, 0..8.
//
// Numerics (see also DESIGN.md §5, "Numerics and the accuracy bound"):
// - Arithmetic is long double (static_assert: at least a 64-bit mantissa); the
//   buffer stores doubles, optionally with residues that make the round trip
//   lossless (IndexMoments::Store).
// - Positions are always relative: moments about the run start, merges shift by
//   the left run's count (all terms positive), and a query shifts to its center
//   c last. Absolute indices (up to 2^40) never get raised to a power.
// - Shifting to a center c right of s cancels: the error of ShiftTo is a few ulps
//   of Σ (|i − s| + |s − c|)^j |a_i| (MagnitudesAbout computes that sum), which
//   equals the reference magnitude Σ |i − c|^j |a_i| when c <= s; for data
//   spread evenly over the run it exceeds it by at most ~3^(j+1)/2 (c near the
//   middle: 14 for j = 2, 1.0e4 for j = 8). Mass concentrated right at c is the
//   bad case: no stored-moment scheme reaches 1e-9 · Σ|i − c|^j |a_i| there,
//   because that sum can be near 0.
// - Un-merging ("total minus complement") cancels by nature: its error is a few
//   ulps of the total's magnitudes (of the total shifted by −δ for UnmergeRight).
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <limits>
#include <span>

#include "buffers/algebra/power_sums.h"
#include "storage/util/status.h"

namespace momenta {

static_assert(std::numeric_limits<long double>::digits >= 64,
              "momenta's moment algebra needs an extended long double (x87 or quad)");

inline constexpr int kMaxMomentOrder = 8;
inline constexpr int kMaxMomentTerms = kMaxMomentOrder + 1;
static_assert(2 * kMaxMomentOrder <= kMaxPowerSumExponent);

// The reference accuracy of a query: |result − exact| <= kReferenceRelativeError
// · Σ |i − c|^j |a_i| (DESIGN.md §5 states the bound as tested).
inline constexpr long double kReferenceRelativeError = 1e-9L;

// The cell sums run four SIMD lanes wide (AVX2) where the CPU has it, else
// as two two-lane vectors (SSE2, NEON); both give the same bits. Tests turn
// the wide kernels off and on to compare them: true when the kernels are now
// as asked (false: `on` asked on a CPU without AVX2). Not for production use.
bool SetWideKernelsForTesting(bool on);

// Terms indexed by order 0..kMaxMomentOrder; entries above a tuple's order are 0.
using MomentTerms = std::array<long double, kMaxMomentTerms>;

// ---------------------------------------------------------------------------
// Index moments of a run.
//
// Accumulation (Of, Append) sums blocks of 256 cells in double with SIMD lanes
// and combines the blocks in long double: relative error at most ~3e-14 of
// Σ x^j |a_x| (worst case; typically ~1e-16). Order 0 is exact for integer
// data with |a_i| <= 2^45 while |Σ a_i| < 2^64.
//
// Updates (ApplyDelta) add delta·x^j in long double: after N updates each
// component is off by at most N · 2^-64 · (its largest magnitude over the
// updates), e.g. 5e-14 relative after 10^6 (rms ~1e3 · 2^-64). Stored with
// residues the tuple keeps exactly that. Stored WITHOUT residues it rounds to
// double at every Store: N · 2^-53 instead (1.1e-10 after 10^6, rms ~1e-13);
// fine about s, but a shift to a center inside the run amplifies it by up to
// ~3^(J+1)/2 (above). Measured (moments_test.cc, DriftAfterAMillionUpdates; J = 8,
// positive data, 10^6 updates, center mid-run): error / Σ|i − c|^j |a_i| =
// 3e-10 with plain doubles against 2.5e-13 with residues. So: store residues
// for J >= 6 or refresh such components from their block every ~10^6 updates.
// All these errors are relative to the largest magnitudes the tuple has held:
// when updates shrink a block's data by many orders (1e9-sized values replaced
// by O(1) ones), the old rounding stays behind; refresh from the block then.
class IndexMoments {
 public:
  // An empty run (count 0, every moment 0) carrying orders 0..order.
  // REQUIRES: 0 <= order <= kMaxMomentOrder
  explicit IndexMoments(int order = 0);

  // The run values[0..n): cell x at offset x.
  // REQUIRES: 0 <= order <= kMaxMomentOrder
  static IndexMoments Of(int order, std::span<const double> values);
  // The magnitude tuple Σ x^j |a_x| of the same run: the scale against which
  // the error of anything derived from Of(order, values) is measured.
  static IndexMoments OfMagnitudes(int order, std::span<const double> values);

  // The stored form: order+1 doubles `values` and, optionally, order+1 doubles
  // `residues` with values[j] + residues[j] == moment(j) exactly (a long double
  // splits into two doubles without loss). Empty residues: each component is
  // rounded to the nearest double. Doubles must hold the moments:
  // count^(order+1) · max|a| below ~1e308.
  // REQUIRES: values.size() == order+1; residues empty or of the same size
  void Store(std::span<double> values, std::span<double> residues = {}) const;
  static IndexMoments Load(int order, uint64_t count, std::span<const double> values,
                           std::span<const double> residues = {});
  // From the moments themselves, exactly: m[j] = Σ x^j a_x for j <= order
  // (entries above order are ignored).
  // REQUIRES: 0 <= order <= kMaxMomentOrder
  static IndexMoments FromTerms(int order, uint64_t count, const MomentTerms& m);

  int order() const { return order_; }
  uint64_t count() const { return count_; }
  // REQUIRES: 0 <= j <= order()
  long double moment(int j) const;
  // All orders; entries above order() are 0.
  const MomentTerms& terms() const { return m_; }

  // Appends values as the cells at offsets count() .. count() + n − 1.
  void Append(std::span<const double> values);
  // Replaces a_x by a_x + delta for the cell at `offset`: M_j += delta · offset^j.
  // REQUIRES: offset < count()
  void ApplyDelta(uint64_t offset, long double delta);
  // The same run with orders 0..order only (cheaper merges at query time).
  // REQUIRES: 0 <= order <= this->order()
  IndexMoments Truncated(int order) const;

 private:
  friend IndexMoments Merge(const IndexMoments&, const IndexMoments&);
  friend IndexMoments UnmergeRight(const IndexMoments&, const IndexMoments&);
  friend IndexMoments UnmergeLeft(const IndexMoments&, const IndexMoments&);

  void AppendImpl(std::span<const double> values, bool magnitudes);

  int order_;           // moments 0..order_ are tracked; m_[j] == 0 above
  uint64_t count_ = 0;  // cells in the run
  MomentTerms m_{};     // m_[j] = Σ x^j a_x about the run's start
};

// The update path's three: inline, so a node update (NodeCodec::ApplyUpdate)
// does not pay three calls per level.
inline void IndexMoments::Store(std::span<double> values, std::span<double> residues) const {
  assert(values.size() == static_cast<size_t>(order_ + 1));
  assert(residues.empty() || residues.size() == values.size());
  for (int j = 0; j <= order_; ++j) {
    values[j] = static_cast<double>(m_[j]);
    if (!residues.empty()) residues[j] = static_cast<double>(m_[j] - values[j]);
  }
}

inline IndexMoments IndexMoments::Load(int order, uint64_t count, std::span<const double> values,
                                       std::span<const double> residues) {
  assert(values.size() == static_cast<size_t>(order + 1));
  assert(residues.empty() || residues.size() == values.size());
  IndexMoments run(order);
  run.count_ = count;
  for (int j = 0; j <= order; ++j) {
    run.m_[j] = values[j];
    if (!residues.empty()) run.m_[j] += residues[j];
  }
  return run;
}

inline void IndexMoments::ApplyDelta(uint64_t offset, long double delta) {
  assert(offset < count_);
  const long double x = static_cast<long double>(offset);
  long double term = delta;  // delta · x^j
  m_[0] += term;
  for (int j = 1; j <= order_; ++j) {
    term *= x;
    m_[j] += term;
  }
}

// The run `left` followed immediately by `right` (formula F, buffers/REFERENCE.md
// §1.2): M_t = L_t + Σ_u C(t,u) δ^(t−u) R_u with δ = left.count(). Θ(J²).
// REQUIRES: left.order() == right.order()
IndexMoments Merge(const IndexMoments& left, const IndexMoments& right);
// Inverses of Merge: given total = Merge(left, right) and one part, the other.
// UnmergeRight shifts the difference back by −δ; its error is a few ulps of
// Σ_u C(t,u) δ^(t−u) |total magnitude_u|. UnmergeLeft's is a few ulps of the
// total's magnitude. REQUIRES: equal orders; part.count() <= total.count()
IndexMoments UnmergeRight(const IndexMoments& total, const IndexMoments& left);
IndexMoments UnmergeLeft(const IndexMoments& total, const IndexMoments& right);

// Moments m[0..order] about a point s moved to the point s − delta:
// out[t] = Σ_x (x + delta)^t a_x = Σ_u C(t,u) delta^(t−u) m[u] (entries above
// order are 0). For delta >= 0 every term is positive in magnitude terms: its
// rounding is a few ulps of Σ_x (x + delta)^t |a_x|.
MomentTerms ShiftedTerms(const MomentTerms& m, int order, long double delta);

// Σ_x (x − center)^j a_x for j = 0..run.order(): the run's moments about a
// center given relative to the run's start (center = c − s; any real, inside
// the run or not). Entries above run.order() are 0.
MomentTerms ShiftTo(const IndexMoments& run, long double center);

// From a magnitude tuple (IndexMoments::OfMagnitudes, or merges of such):
// Σ_x (x + |center|)^j |a_x|, an upper bound of the reference magnitude
// Σ_x |x − center|^j |a_x|, equal to it when center <= 0 (c left of the run).
// It is the scale of ShiftTo's rounding error.
MomentTerms MagnitudesAbout(const IndexMoments& magnitudes, long double center);
// kReferenceRelativeError times MagnitudesAbout: the error a query about
// `center` may have (tests check results against it).
MomentTerms ReferenceErrorBound(const IndexMoments& magnitudes, long double center);

// ---------------------------------------------------------------------------
// Value moments of a run: mean and variance of the values.
//
// Representation: count n, a shift K (a double, near the run's mean), and
// S1 = Σ(a − K), S2 = Σ(a − K)² in long double. Then mean = K + S1/n and
// Σ(a − mean)² = S2 − S1²/n, which cancels only as much as (mean − K)² exceeds
// the variance. Why not raw power sums: Σa² − (Σa)²/n loses everything for
// 1e9 + N(0,1) data. Why not Welford/Chan (n, mean, M2): its merge is as good,
// but an update must move the mean by (a' − a)/n, rounding it at |mean| each
// time (1e-7 per update at mean 1e9 in double), and that error leaks into M2;
// here K never moves on an update and S1, S2 change by exactly computable
// amounts ((a' − K)² − (a − K)² with a' − K, a − K exact).
// K is kept near the mean: Of and Merge pick K = the mean rounded to double
// (so the pairwise no-cancellation merge falls out: the cross terms are ~0;
// the formulas: buffers/REFERENCE.md §6), Unmerge
// re-centers its result, and ApplyUpdate re-centers when (mean − K)² grows past
// the variance. K is a double, so the stored form (3 doubles) keeps it exactly.
//
// Non-finite values make every derived statistic NaN or infinite; the buffer
// keeps them out (RangeSummary counts them apart).
class ValueMoments {
 public:
  ValueMoments() = default;  // empty: count 0
  static ValueMoments Of(std::span<const double> values);

  // Stored form: {shift, S1, S2} as 3 doubles; the count is the caller's.
  // S1 and S2 round to double: after N updates a relative error of about
  // N · 2^-53 of S2 (1.1e-10 of the variance after 10^6).
  // REQUIRES: stored.size() == 3 (Load ignores it when count is 0)
  void Store(std::span<double> stored) const;
  static ValueMoments Load(uint64_t count, std::span<const double> stored);
  // From its parts, exactly (a store that keeps S1 and S2 in long double).
  // REQUIRES: count 0 only with all parts 0
  static ValueMoments FromParts(uint64_t count, double shift, long double s1, long double s2) {
    return ValueMoments(count, shift, s1, s2);
  }

  uint64_t count() const { return count_; }
  double shift() const { return shift_; }
  long double sum_of_deviations() const { return s1_; }          // Σ(a − K)
  long double sum_of_squared_deviations() const { return s2_; }  // Σ(a − K)²
  // K + S1/n. REQUIRES: count() > 0
  long double mean() const;
  // Σ(a − mean)² = S2 − S1²/n, clamped at 0 (0 for an empty run).
  long double central_sum_of_squares() const;

  void Append(std::span<const double> values);
  // Replaces one cell's value old_value by new_value.
  // REQUIRES: count() > 0
  void ApplyUpdate(double old_value, double new_value);
  // Adds one cell (count + 1), or takes one that the run holds out (count − 1;
  // the run becomes empty, every part 0, when it was the last). Used when a
  // cell turns finite or stops being finite (the buffer keeps value moments
  // over the finite cells only). REQUIRES of Erase: count() > 0
  void Insert(double value);
  void Erase(double value);
  // Some cells changed, the count unchanged: S1 += ds1 = Σ(a' − a) and
  // S2 += ds2 = Σ(a' − K)² − (a − K)² (S2 clamped at 0), then re-centered as
  // ApplyUpdate does. REQUIRES: count() > 0
  void AddDeviations(long double ds1, long double ds2);
  // The same run with shift k: S1 += n(K − k), S2 += 2(K − k)S1 + n(K − k)²
  // (clamped at 0).
  ValueMoments RecenteredAt(double k) const;

 private:
  friend ValueMoments Merge(const ValueMoments&, const ValueMoments&);
  friend ValueMoments Unmerge(const ValueMoments&, const ValueMoments&);

  ValueMoments(uint64_t count, double shift, long double s1, long double s2)
      : count_(count), shift_(shift), s1_(s1), s2_(s2) {}
  ValueMoments Recentered() const;  // shift = mean rounded to double

  uint64_t count_ = 0;
  double shift_ = 0;    // K; 0 when empty
  long double s1_ = 0;  // Σ(a − K)
  long double s2_ = 0;  // Σ(a − K)²
};

// The union of two runs (values have no positions: order does not matter).
ValueMoments Merge(const ValueMoments& a, const ValueMoments& b);
// The part of `total` that is not `part`. REQUIRES: part.count() <= total.count()
ValueMoments Unmerge(const ValueMoments& total, const ValueMoments& part);

// ---------------------------------------------------------------------------
// Min and max of a run. NaN cells are ignored; an empty (or all-NaN) run has
// min = +inf > max = −inf, the identity of Merge. Not invertible: an update
// that replaces a run's extreme needs the run rescanned (the buffer's job).
struct Extremes {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  static Extremes Of(std::span<const double> values);
  void Append(std::span<const double> values);
  bool empty() const { return !(min <= max); }
};
Extremes Merge(const Extremes& a, const Extremes& b);

// ---------------------------------------------------------------------------
// Statistics of a range [p, q) from its tuples (index moments about p).
//
// An empty range has count 0, sum 0 and every moment 0 (sums over nothing);
// the statistics that divide by the count or the weights (mean, var, std, com,
// spread, polyfit, min, max) return InvalidArgument for it. Other errors are
// InvalidArgument too: an order or degree above the tuple's, a negative ddof or
// one >= count, weights summing to 0.

long double Sum(const IndexMoments& range);  // Σ a_i (integers: exact, see Of)
Result<long double> Mean(const ValueMoments& range);
// Σ(a − mean)² / (count − ddof). ddof 0: population, 1: sample.
Result<long double> Variance(const ValueMoments& range, int ddof = 0);
Result<long double> StdDev(const ValueMoments& range, int ddof = 0);
Result<double> Min(const Extremes& range);
Result<double> Max(const Extremes& range);

// Σ_{i∈[p,q)} (i − c)^k a_i, c absolute (any real).
Result<long double> Moment(const IndexMoments& range, uint64_t p, int k, long double c);
// The same for orders 0..k in one answer (entries above k are 0).
Result<MomentTerms> Moments(const IndexMoments& range, uint64_t p, int k, long double c);
// Center of mass Σ i a_i / Σ a_i = p + M1/M0 (absolute index). Needs order >= 1.
// Near index 2^40 a long double resolves 2^-23 of a cell (a double 2^-12).
Result<long double> CenterOfMass(const IndexMoments& range, uint64_t p);
// Weighted index standard deviation sqrt(Σ (i − com)² a_i / Σ a_i). Needs
// order >= 2; InvalidArgument when the weights make Σ (i − com)² a_i negative.
Result<long double> Spread(const IndexMoments& range);
// Least-squares polynomial of `degree` fitted to the a_i: coefficients c_m of
// (i − p)^m, m = 0..degree (entries above are 0). Needs degree <= order and at
// least degree + 1 cells. See FitPolynomial for conditioning.
Result<MomentTerms> PolyFit(const IndexMoments& range, int degree);

}  // namespace momenta
