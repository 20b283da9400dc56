#include "buffers/algebra/range_bounds.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>

#include "buffers/algebra/power_sums.h"
#include "buffers/algebra/square_bounds.h"  // NodeSquares

namespace momenta {
namespace {

using ld = long double;
constexpr ld kInf = std::numeric_limits<ld>::infinity();
// One long double rounding: at most 2^-64 of the result's magnitude.
constexpr ld kUlp = 0x1p-64L;
// The rounding of a bound computed in a few operations (at most eight, each
// on terms no larger than `mag`) is at most 8 · 2^-64 · mag.
ld Down(ld x, ld mag) { return x - 8 * kUlp * mag; }
ld Up(ld x, ld mag) { return x + 8 * kUlp * mag; }

// A finite cell value's bounds from a node's min and max, which include
// infinities: a finite cell lies in [max(min, −DBL_MAX), min(max, DBL_MAX)].
ld FiniteLow(const Extremes& e) { return std::max<ld>(e.min, -DBL_MAX); }
ld FiniteHigh(const Extremes& e) { return std::min<ld>(e.max, DBL_MAX); }
// max |a| over a node's f finite cells (0 when there are none).
ld MaxAbs(const RangeSummary& s, uint64_t f) {
  if (f == 0 || s.extremes.empty()) return 0;
  return std::max(std::fabs(FiniteLow(s.extremes)), std::fabs(FiniteHigh(s.extremes)));
}
uint64_t FiniteCount(const RangeSummary& s) { return s.count() - s.nonfinite.total(); }
// The error of a node's stored finite sum S, as the buffer's bound allows
// it: ε · Σ|a| over its f finite cells, |a| at the largest each cell has held
// since the node was last computed from data (DESIGN.md §5). Every such
// value lies within the node's min and max (an update that replaces an
// extreme has the node recomputed), so f · max|a| bounds it always. A
// `fresh` node (no incremental update since the build: the sums describe the
// data as it is) is bounded by the least of
//   f · max|a|
//   S + 2 f · max(0, −min)    (Σ|a| = Σa + 2 Σ_{a<0} |a|)
//   −S + 2 f · max(0, max)    (Σ|a| = −Σa + 2 Σ_{a>0} a)
// where the exact Σa is within ε Σ|a| of S, so the last two are divided by
// 1 − ε (for data of one sign Σ|a| is then |S| itself, however spiky).
ld NodeSlack(const RangeSummary& s, bool fresh) {
  const uint64_t f = FiniteCount(s);
  if (f == 0) return 0;
  const ld fl = static_cast<ld>(f), sum = s.index.moment(0);
  ld abs_bound = fl * MaxAbs(s, f);
  if (fresh && std::isfinite(sum) && !s.extremes.empty()) {
    const ld neg = std::max<ld>(0, -FiniteLow(s.extremes)), pos = std::max<ld>(0, FiniteHigh(s.extremes));
    const ld by_sign = std::min(sum + 2 * fl * neg, -sum + 2 * fl * pos);
    abs_bound = std::min(abs_bound, Up(by_sign, std::fabs(sum) + 2 * fl * (neg + pos)) / (1 - kNodeSumRelativeError));
  }
  return kNodeSumRelativeError * std::max<ld>(0, abs_bound) * (1 + 4 * kUlp);
}
// The rounding of KnownCells' sums: adding n terms in order, each rounding at
// most 2^-64 of the running magnitude (<= the sum of |terms|).
ld SequentialError(uint64_t n, ld abs_sum) { return static_cast<ld>(n + 1) * kUlp * abs_sum; }

// Integer bounds of an integer dtype's extreme (stored as a double, exact up
// to 2^53; beyond, rounded to nearest: one step outward is sound).
Int128 IntBelow(double v) {
  if (std::fabs(v) <= 0x1p53) return static_cast<Int128>(v);
  return static_cast<Int128>(std::floor(std::nextafter(v, -HUGE_VAL)));
}
Int128 IntAbove(double v) {
  if (std::fabs(v) <= 0x1p53) return static_cast<Int128>(v);
  return static_cast<Int128>(std::ceil(std::nextafter(v, HUGE_VAL)));
}
// An Int128 as a long double not above it / not below it.
ld LongBelow(Int128 x) {
  ld v = static_cast<ld>(x);
  if (static_cast<Int128>(v) > x) v = std::nextafterl(v, -kInf);
  return v;
}
ld LongAbove(Int128 x) {
  ld v = static_cast<ld>(x);
  if (static_cast<Int128>(v) < x) v = std::nextafterl(v, kInf);
  return v;
}

// What one partial leaf adds: its finite inside sum to [lo, hi] (sound), an
// estimate, and intervals on how many NaN, +inf and −inf cells lie inside.
struct Piece {
  ld lo = 0, hi = 0, est = 0;
  Int128 ilo = 0, ihi = 0, iest = 0;
  NonFiniteCounts min_inside, max_inside;
};

// The counts of each kind of the leaf's unread cells that may lie inside:
// c unread cells of a kind, u_in unread inside and u_out unread outside, give
// [max(0, c − u_out), min(c, u_in)], plus the ones read inside.
void CountsInside(const PartialLeaf& e, uint64_t u_in, uint64_t u_out, Piece* out) {
  const NonFiniteCounts& l = e.leaf.nonfinite;
  const NonFiniteCounts& ki = e.known_inside.nonfinite;
  const NonFiniteCounts& ko = e.known_outside.nonfinite;
  auto one = [&](uint64_t total, uint64_t in, uint64_t outside, uint64_t* lo, uint64_t* hi) {
    const uint64_t c = total - in - outside;  // unread cells of the kind
    *lo = in + (c > u_out ? c - u_out : 0);
    *hi = in + std::min(c, u_in);
  };
  one(l.nan, ki.nan, ko.nan, &out->min_inside.nan, &out->max_inside.nan);
  one(l.pos_inf, ki.pos_inf, ko.pos_inf, &out->min_inside.pos_inf, &out->max_inside.pos_inf);
  one(l.neg_inf, ki.neg_inf, ko.neg_inf, &out->min_inside.neg_inf, &out->max_inside.neg_inf);
}

// The spread bound on the unread inside cells' sum, when every cell of the
// leaf is finite: the u unread cells inside, out of the n_r unread, have
// |Σ_in a − u·μ_r| <= sqrt(u·(n_r − u)·C_r/n_r) with μ_r, C_r the mean and
// central sum of squares of the unread cells:
//   S1_r = S1 − Σ_read (a − K)   (± e1)
//   S2_r <= S2·(1 + ε) − Σ_read (a − K)²·(1 − rounding)
//   C_r <= S2_r − max(0, |S1_r| − e1)² / n_r
//   Σ_in a ∈ u·K + u·S1_r/n_r ± (u·e1/n_r + sqrt(u·(n_r − u)·C_r/n_r))
// False when the leaf's sums are not finite (then only the other bounds hold).
bool SpreadBound(const PartialLeaf& e, uint64_t u_in, uint64_t u_out, ld* lo, ld* hi) {
  const ValueMoments& v = e.leaf.values;
  const ld n = static_cast<ld>(e.leaf.count());
  const ld k = v.shift(), s1 = v.sum_of_deviations(), s2 = v.sum_of_squared_deviations();
  if (!std::isfinite(k) || !std::isfinite(s1) || !std::isfinite(s2)) return false;
  const KnownCells& ki = e.known_inside;
  const KnownCells& ko = e.known_outside;
  const uint64_t read = ki.count + ko.count;
  const ld read_abs = ki.dev_abs + ko.dev_abs;
  const ld s1_r = s1 - ki.dev_sum - ko.dev_sum;
  const ld e1 = kNodeSumRelativeError * std::sqrt(n * s2 * (1 + kNodeSumRelativeError)) +
                8 * kUlp * (std::fabs(s1) + read_abs) + SequentialError(read, read_abs);
  const ld read_sq_low = (ki.dev_sq + ko.dev_sq) * (1 - static_cast<ld>(read + 8) * 2 * kUlp);
  const ld s2_r = std::max<ld>(0, Up(s2 * (1 + kNodeSumRelativeError) - read_sq_low, s2 * 2));
  const ld n_r = static_cast<ld>(u_in + u_out);
  const ld s1_low = std::max<ld>(0, std::fabs(s1_r) - e1);
  const ld c_r = std::max<ld>(0, Up(s2_r - s1_low * s1_low / n_r, s2_r));
  const ld u = static_cast<ld>(u_in);
  const ld center = u * k + u * (s1_r / n_r);
  const ld radius =
      Up(u * e1 / n_r + std::sqrt((u / n_r) * static_cast<ld>(u_out) * c_r) * (1 + 8 * kUlp), u * e1 / n_r);
  const ld mag = std::fabs(u * k) + std::fabs(u * s1_r / n_r) + radius;
  *lo = Down(center - radius, mag);
  *hi = Up(center + radius, mag);
  return true;
}

// Σ_{x=a}^{b−1} x^m from the closed-form power sums (S_m(w) = w^m · Σ (x/w)^m).
ld PowerSumBetween(uint64_t a, uint64_t b, int m) {
  auto upto = [m](uint64_t w) { return w == 0 ? 0 : std::pow(static_cast<ld>(w), m) * ScaledPowerSum(w, m); };
  return upto(b) - upto(a);
}

// A guess at the inside sum of a leaf none of whose cells has been read: the
// least-squares polynomial of degree min(J, 2) through the leaf's cells (from
// its index moments), summed over the inside offsets. False when it does not
// apply (non-finite cells, order 0, too few cells, a singular fit).
bool PolynomialShare(const PartialLeaf& e, ld* out) {
  const RangeSummary& leaf = e.leaf;
  const int degree = std::min(leaf.index.order(), 2);
  const uint64_t n = leaf.count();
  if (degree < 1 || leaf.nonfinite.total() > 0 || n <= static_cast<uint64_t>(degree) + 1) return false;
  std::array<ld, 3> moments{}, c{};
  for (int m = 0; m <= degree; ++m) moments[m] = leaf.index.moment(m);
  if (!FitPolynomial(n, std::span<const ld>(moments.data(), degree + 1), std::span<ld>(c.data(), degree + 1)))
    return false;
  ld sum = 0;
  for (int m = 0; m <= degree; ++m) sum += c[m] * PowerSumBetween(e.inside_first, e.inside_first + e.inside, m);
  if (!std::isfinite(sum)) return false;
  *out = sum;
  return true;
}

// A float leaf's inside sum: the cells read inside, plus the tightest of the
// direct, complement and spread bounds on the unread cells inside.
Piece FloatPiece(const PartialLeaf& e) {
  Piece out;
  const RangeSummary& leaf = e.leaf;
  const KnownCells& ki = e.known_inside;
  const KnownCells& ko = e.known_outside;
  const uint64_t n = leaf.count();
  const uint64_t u_in = e.inside - ki.count, u_out = n - e.inside - ko.count;
  CountsInside(e, u_in, u_out, &out);
  const ld known_err = SequentialError(ki.count, ki.finite_abs);
  out.lo = ki.finite_sum - known_err;
  out.hi = ki.finite_sum + known_err;
  out.est = ki.finite_sum;
  // The unread cells: n_r of them, f_r finite.
  const uint64_t n_r = u_in + u_out;
  const uint64_t nonfinite_r = leaf.nonfinite.total() - ki.nonfinite.total() - ko.nonfinite.total();
  const uint64_t f_r = n_r - nonfinite_r;
  if (u_in == 0 || f_r == 0) return out;
  // How many unread finite cells lie inside: [fin_lo, fin_hi]; outside: f_r minus that.
  const ld fin_lo = static_cast<ld>(f_r > u_out ? f_r - u_out : 0), fin_hi = static_cast<ld>(std::min(f_r, u_in));
  const ld fo_lo = static_cast<ld>(f_r) - fin_hi, fo_hi = static_cast<ld>(f_r) - fin_lo;
  const ld m = FiniteLow(leaf.extremes), M = FiniteHigh(leaf.extremes);
  // direct: every unread inside cell lies in [m, M].
  const ld d_lo = std::min(fin_lo * m, fin_hi * m), d_hi = std::max(fin_lo * M, fin_hi * M);
  ld lo = Down(d_lo, std::fabs(d_lo)), hi = Up(d_hi, std::fabs(d_hi));
  const ld direct_lo = lo, direct_hi = hi;
  // complement: the unread cells' sum F_r (the leaf's less what was read)
  // minus the unread outside cells, which lie in [m, M] each.
  const ld f_sum = leaf.index.moment(0);
  const ld f_r_sum = f_sum - ki.finite_sum - ko.finite_sum;
  const ld slack = NodeSlack(leaf, e.fresh) + SequentialError(ki.count, ki.finite_abs) +
                   SequentialError(ko.count, ko.finite_abs) +
                   8 * kUlp * (std::fabs(f_sum) + ki.finite_abs + ko.finite_abs);
  const ld out_max = std::max(fo_lo * M, fo_hi * M), out_min = std::min(fo_lo * m, fo_hi * m);
  if (std::isfinite(f_r_sum) && std::isfinite(slack)) {  // a stored sum past DBL_MAX bounds nothing
    const ld c_lo = f_r_sum - slack - out_max, c_hi = f_r_sum + slack - out_min;
    lo = std::max(lo, Down(c_lo, std::fabs(f_r_sum) + slack + std::fabs(out_max)));
    hi = std::min(hi, Up(c_hi, std::fabs(f_r_sum) + slack + std::fabs(out_min)));
  }
  // spread: only when every cell of the leaf is finite (then f_r = n_r).
  ld s_lo, s_hi;
  if (leaf.nonfinite.total() == 0 && u_out > 0 && SpreadBound(e, u_in, u_out, &s_lo, &s_hi)) {
    lo = std::max(lo, s_lo);
    hi = std::min(hi, s_hi);
  }
  // The bounds meet unless the buffer broke its own accuracy bound; the
  // direct bound needs only min and max, so it stands alone then.
  if (lo > hi) lo = direct_lo, hi = direct_hi;
  ld share = f_r_sum * (static_cast<ld>(u_in) / static_cast<ld>(n_r));
  if (ki.count == 0 && ko.count == 0) PolynomialShare(e, &share);  // keeps the share when it does not apply
  if (std::isnan(share)) share = (lo + hi) / 2;
  out.lo += lo;
  out.hi += hi;
  out.est += std::clamp(share, lo, hi);
  // Adding the known part rounds once more.
  const ld mag = std::fabs(out.lo) + std::fabs(out.hi);
  out.lo = Down(out.lo, mag);
  out.hi = Up(out.hi, mag);
  return out;
}

// An integer leaf's inside sum, exactly: the direct and complement bounds in
// Int128 (|cells| < 2^64, leaves far below 2^60 cells).
Piece IntegerPiece(const PartialLeaf& e) {
  Piece out;
  const RangeSummary& leaf = e.leaf;
  const KnownCells& ki = e.known_inside;
  const KnownCells& ko = e.known_outside;
  const uint64_t n = leaf.count();
  const uint64_t u_in = e.inside - ki.count, u_out = n - e.inside - ko.count;
  out.ilo = out.ihi = out.iest = ki.exact_sum;
  if (u_in == 0) return out;
  const Int128 m = IntBelow(leaf.extremes.min), M = IntAbove(leaf.extremes.max);
  const Int128 rest = leaf.exact_sum - ki.exact_sum - ko.exact_sum;  // Σ over the unread cells
  const Int128 in = static_cast<Int128>(u_in), outside = static_cast<Int128>(u_out);
  const Int128 lo = std::max(in * m, rest - outside * M);
  const Int128 hi = std::min(in * M, rest - outside * m);
  const Int128 share = rest * in / (in + outside);
  out.ilo += lo;
  out.ihi += hi;
  out.iest += std::clamp(share, lo, std::max(lo, hi));
  return out;
}

}  // namespace

double DoubleBelow(long double x) {
  if (std::isnan(x)) return std::nan("");
  double d = static_cast<double>(x);
  if (static_cast<ld>(d) > x) d = std::nextafter(d, -HUGE_VAL);
  return d;
}

double DoubleAbove(long double x) {
  if (std::isnan(x)) return std::nan("");
  double d = static_cast<double>(x);
  if (static_cast<ld>(d) < x) d = std::nextafter(d, HUGE_VAL);
  return d;
}

void KnownCells::Add(const Value& v, double shift) {
  ++count;
  switch (v.kind) {
    case Value::Kind::kInt:
      exact_sum += v.i;
      break;
    case Value::Kind::kUInt:
      exact_sum += static_cast<Int128>(v.u);
      break;
    case Value::Kind::kFloat:
      if (std::isnan(v.f)) {
        ++nonfinite.nan;
        return;
      }
      if (std::isinf(v.f)) {
        ++(v.f > 0 ? nonfinite.pos_inf : nonfinite.neg_inf);
        return;
      }
      break;
  }
  const ld a = v.AsLongDouble();
  finite_sum += a;
  finite_abs += std::fabs(a);
  const ld d = a - shift;
  dev_sum += d;
  dev_abs += std::fabs(d);
  dev_sq += d * d;
  finite_sq += a * a;
}

void WholeNodes::Add(const RangeSummary& node) {
  count += node.count();
  const ld s = node.index.moment(0);
  finite_sum += s;
  magnitude += std::fabs(s);
  // The node's own error, and the rounding of this addition (2^-64 of the
  // running sum, which is at most the magnitude).
  slack += NodeSlack(node, fresh) + 2 * kUlp * magnitude;
  const NodeSquaresBound squares = NodeSquares(node, fresh);
  finite_sumsq += squares.value;
  sumsq_slack += squares.slack + 2 * kUlp * finite_sumsq;
  nonfinite.nan += node.nonfinite.nan;
  nonfinite.pos_inf += node.nonfinite.pos_inf;
  nonfinite.neg_inf += node.nonfinite.neg_inf;
  exact_sum += node.exact_sum;
}

SumBound BoundSum(const WholeNodes& whole, std::span<const PartialLeaf> ends, DType dtype) {
  SumBound b;
  b.exact = std::all_of(ends.begin(), ends.end(), [](const PartialLeaf& e) { return e.determined(); });
  if (DTypeIsInteger(dtype)) {
    b.is_integer = true;
    b.int_estimate = b.int_lower = b.int_upper = whole.exact_sum;
    for (const PartialLeaf& e : ends) {
      const Piece p = IntegerPiece(e);
      b.int_lower += p.ilo;
      b.int_upper += p.ihi;
      b.int_estimate += p.iest;
    }
    b.lower = DoubleBelow(LongBelow(b.int_lower));
    b.upper = DoubleAbove(LongAbove(b.int_upper));
    b.estimate = std::clamp(static_cast<double>(b.int_estimate), b.lower, b.upper);
    return b;
  }
  // The finite part, and how many of each non-finite kind lie inside.
  ld lo = whole.finite_sum - whole.slack, hi = whole.finite_sum + whole.slack, est = whole.finite_sum;
  ld mag = std::fabs(whole.finite_sum) + whole.slack;
  NonFiniteCounts min_in = whole.nonfinite, max_in = whole.nonfinite;
  for (const PartialLeaf& e : ends) {
    const Piece p = FloatPiece(e);
    lo += p.lo;
    hi += p.hi;
    est += p.est;
    mag += std::fabs(p.lo) + std::fabs(p.hi);
    min_in.nan += p.min_inside.nan, max_in.nan += p.max_inside.nan;
    min_in.pos_inf += p.min_inside.pos_inf, max_in.pos_inf += p.max_inside.pos_inf;
    min_in.neg_inf += p.min_inside.neg_inf, max_in.neg_inf += p.max_inside.neg_inf;
  }
  lo = Down(lo, mag);
  hi = Up(hi, mag);
  // A whole node's stored sum past DBL_MAX (an overflow) bounds nothing.
  if (std::isnan(lo)) lo = -kInf;
  if (std::isnan(hi)) hi = kInf;
  // NaN and infinities, as np.sum: NaN beats everything, +inf + −inf is NaN.
  if (min_in.nan > 0 || (min_in.pos_inf > 0 && min_in.neg_inf > 0)) {
    b.nan = NanState::kCertain;
    b.estimate = b.lower = b.upper = std::nan("");
    return b;
  }
  const bool nan_possible = max_in.nan > 0 || (max_in.pos_inf > 0 && max_in.neg_inf > 0);
  b.nan = nan_possible ? NanState::kMaybe : NanState::kNo;
  if (min_in.pos_inf > 0 || min_in.neg_inf > 0) {  // one infinity certainly inside: ±inf, or NaN
    b.estimate = b.lower = b.upper = min_in.pos_inf > 0 ? HUGE_VAL : -HUGE_VAL;
    if (min_in.pos_inf > 0 ? max_in.neg_inf > 0 : max_in.pos_inf > 0) b.nan = NanState::kMaybe;
    // With no unread cell that could change it, the answer is decided.
    return b;
  }
  b.lower = max_in.neg_inf > 0 ? -HUGE_VAL : DoubleBelow(lo);
  b.upper = max_in.pos_inf > 0 ? HUGE_VAL : DoubleAbove(hi);
  b.estimate = std::clamp(static_cast<double>(est), b.lower, b.upper);
  return b;
}

SumBound BoundMean(const SumBound& sum, uint64_t count) {
  SumBound b;
  b.nan = sum.nan;
  b.exact = sum.exact;
  const ld n = static_cast<ld>(count);
  if (sum.nan == NanState::kCertain) {
    b.estimate = b.lower = b.upper = std::nan("");
    return b;
  }
  const ld lo = (sum.is_integer ? LongBelow(sum.int_lower) : static_cast<ld>(sum.lower)) / n;
  const ld hi = (sum.is_integer ? LongAbove(sum.int_upper) : static_cast<ld>(sum.upper)) / n;
  // One division each: 2^-64 of the quotient (infinities pass through).
  b.lower = std::isinf(lo) ? static_cast<double>(lo) : DoubleBelow(Down(lo, std::fabs(lo)));
  b.upper = std::isinf(hi) ? static_cast<double>(hi) : DoubleAbove(Up(hi, std::fabs(hi)));
  const ld est = (sum.is_integer ? static_cast<ld>(sum.int_estimate) : static_cast<ld>(sum.estimate)) / n;
  b.estimate = std::clamp(static_cast<double>(est), b.lower, b.upper);
  return b;
}

}  // namespace momenta
