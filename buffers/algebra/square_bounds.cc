#include "buffers/algebra/square_bounds.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

namespace momenta {
namespace {

using ld = long double;
constexpr ld kUlp = 0x1p-64L;  // one long double rounding, relative
constexpr ld kEps = kNodeSumRelativeError;

ld Down(ld x, ld mag) { return x - 16 * kUlp * mag; }
ld Up(ld x, ld mag) { return x + 16 * kUlp * mag; }
ld FiniteLow(const Extremes& e) { return std::max<ld>(e.min, -DBL_MAX); }
ld FiniteHigh(const Extremes& e) { return std::min<ld>(e.max, DBL_MAX); }
uint64_t Sat(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Σa² over cells read in order: (n + 2) roundings of at most 2^-64 of the total.
ld ReadError(const KnownCells& k) { return static_cast<ld>(k.count + 2) * kUlp * k.finite_sq; }

// What one partial leaf adds: bounds on its inside Σa², an estimate, and how
// many NaN and infinite cells lie inside (at least, at most).
struct Piece {
  ld lo = 0, hi = 0, est = 0;
  uint64_t nan_lo = 0, nan_hi = 0, inf_lo = 0, inf_hi = 0;
};

// c cells of a kind in the leaf, `in` and `out` of them read inside and outside.
void Inside(uint64_t c, uint64_t in, uint64_t out, uint64_t u_in, uint64_t u_out, uint64_t* lo, uint64_t* hi) {
  const uint64_t unread = c - in - out;
  *lo = in + Sat(unread, u_out);
  *hi = in + std::min(unread, u_in);
}

Piece LeafPiece(const PartialLeaf& e) {
  Piece out;
  const RangeSummary& leaf = e.leaf;
  const KnownCells& ki = e.known_inside;
  const KnownCells& ko = e.known_outside;
  const uint64_t u_in = e.inside - ki.count, u_out = leaf.count() - e.inside - ko.count;
  const NonFiniteCounts &l = leaf.nonfinite, &a = ki.nonfinite, &b = ko.nonfinite;
  Inside(l.nan, a.nan, b.nan, u_in, u_out, &out.nan_lo, &out.nan_hi);
  Inside(l.pos_inf + l.neg_inf, a.pos_inf + a.neg_inf, b.pos_inf + b.neg_inf, u_in, u_out, &out.inf_lo, &out.inf_hi);
  out.lo = ki.finite_sq - ReadError(ki);
  out.hi = ki.finite_sq + ReadError(ki);
  out.est = ki.finite_sq;
  const uint64_t f_r = u_in + u_out - (l.total() - a.total() - b.total());  // unread finite cells
  if (u_in == 0 || f_r == 0 || leaf.extremes.empty()) return out;
  const ld k_lo = static_cast<ld>(Sat(f_r, u_out)), k_hi = static_cast<ld>(std::min(f_r, u_in));
  const ld o_lo = static_cast<ld>(f_r) - k_hi, o_hi = static_cast<ld>(f_r) - k_lo;
  const ld m = FiniteLow(leaf.extremes), M = FiniteHigh(leaf.extremes);
  const ld sq_hi = std::max(m * m, M * M) * (1 + 2 * kUlp);
  const ld sq_lo = (m <= 0 && M >= 0) ? 0 : std::min(m * m, M * M) * (1 - 2 * kUlp);
  const ld d_lo = k_lo * sq_lo * (1 - 2 * kUlp), d_hi = k_hi * sq_hi * (1 + 2 * kUlp);
  ld lo = d_lo, hi = d_hi;
  const NodeSquaresBound q = NodeSquares(leaf, e.fresh);
  const ld q_r = q.value - ki.finite_sq - ko.finite_sq;
  const ld mag = q.value + ki.finite_sq + ko.finite_sq;
  const ld slack = q.slack + ReadError(ki) + ReadError(ko);
  if (std::isfinite(q_r) && std::isfinite(slack)) {
    const ld out_hi = o_hi * sq_hi, out_lo = o_lo * sq_lo;
    lo = std::max(lo, Down(q_r - slack - out_hi, mag + slack + out_hi));
    hi = std::min(hi, Up(q_r + slack - out_lo, mag + slack + out_lo));
  }
  lo = std::max<ld>(lo, 0);
  if (lo > hi) lo = d_lo, hi = d_hi;  // the buffer broke its own bound: min and max alone
  const ld share = std::isfinite(q_r) ? q_r * (static_cast<ld>(u_in) / static_cast<ld>(u_in + u_out)) : (lo + hi) / 2;
  out.lo = Down(out.lo + lo, out.hi + hi);
  out.hi = Up(out.hi + hi, out.hi + hi);
  out.est += std::clamp(share, lo, hi);
  return out;
}

}  // namespace

NodeSquaresBound NodeSquares(const RangeSummary& node, bool fresh) {
  const ValueMoments& v = node.values;
  const uint64_t count = v.count();
  if (count == 0) return {};
  const ld f = static_cast<ld>(count), k = v.shift(), s1 = v.sum_of_deviations(), s2 = v.sum_of_squared_deviations();
  NodeSquaresBound out;
  const ld c = v.central_sum_of_squares();
  const ld mean = v.mean();
  out.value = c + f * mean * mean;
  // e2, e1: the allowances of S2 and S1 (above), from the extremes always and,
  // on a fresh build, from S2 itself when smaller.
  ld e2 = std::numeric_limits<ld>::infinity(), e1 = e2;
  if (!node.extremes.empty()) {
    const ld d = std::max(std::fabs(FiniteLow(node.extremes) - k), std::fabs(FiniteHigh(node.extremes) - k));
    e2 = kEps * f * d * d;
    e1 = kEps * f * d;
  }
  if (fresh) {
    const ld s2_up = std::max<ld>(0, s2) * (1 + 4 * kEps);
    e2 = std::min(e2, kEps * s2_up);
    e1 = std::min(e1, kEps * std::sqrt(f * s2_up));
  }
  const ld magnitude = std::fabs(s2) + 2 * std::fabs(k * s1) + f * k * k + s1 * s1 / f + out.value;
  out.slack = (e2 + 2 * std::fabs(k) * e1 + (2 * std::fabs(s1) + e1) * e1 / f + 16 * kUlp * magnitude) * (1 + 8 * kUlp);
  return out;
}

SumBound BoundSumOfSquares(const WholeNodes& whole, std::span<const PartialLeaf> ends) {
  SumBound b;
  b.exact = std::all_of(ends.begin(), ends.end(), [](const PartialLeaf& e) { return e.determined(); });
  ld lo = whole.finite_sumsq - whole.sumsq_slack, hi = whole.finite_sumsq + whole.sumsq_slack;
  ld est = whole.finite_sumsq;
  uint64_t nan_lo = whole.nonfinite.nan, nan_hi = nan_lo;
  uint64_t inf_lo = whole.nonfinite.pos_inf + whole.nonfinite.neg_inf, inf_hi = inf_lo;
  for (const PartialLeaf& e : ends) {
    const Piece p = LeafPiece(e);
    lo += p.lo, hi += p.hi, est += p.est;
    nan_lo += p.nan_lo, nan_hi += p.nan_hi, inf_lo += p.inf_lo, inf_hi += p.inf_hi;
  }
  lo = std::max<ld>(0, Down(lo, std::fabs(hi)));
  hi = Up(hi, std::fabs(hi));
  if (std::isnan(hi)) hi = std::numeric_limits<ld>::infinity();  // a stored sum past DBL_MAX bounds nothing
  if (std::isnan(lo)) lo = 0;
  if (nan_lo > 0) {
    b.nan = NanState::kCertain;
    b.estimate = b.lower = b.upper = std::nan("");
    return b;
  }
  b.nan = nan_hi > 0 ? NanState::kMaybe : NanState::kNo;
  if (inf_lo > 0) {  // an infinity certainly inside: +inf, or NaN
    b.estimate = b.lower = b.upper = HUGE_VAL;
    return b;
  }
  b.lower = DoubleBelow(lo);
  b.upper = inf_hi > 0 ? HUGE_VAL : DoubleAbove(hi);
  b.estimate = std::clamp(static_cast<double>(est), b.lower, b.upper);
  return b;
}

SumBound BoundRms(const SumBound& sumsq, uint64_t count) {
  SumBound b = sumsq;
  if (sumsq.nan == NanState::kCertain) return b;
  const ld n = static_cast<ld>(count);
  auto root = [n](double x, int side) {  // sqrt(x / n), a division and a root: 4 roundings outward
    const ld r = std::sqrt(static_cast<ld>(x) / n);
    return side < 0 ? DoubleBelow(r * (1 - 4 * kUlp)) : DoubleAbove(r * (1 + 4 * kUlp));
  };
  b.lower = root(sumsq.lower, -1);
  b.upper = root(sumsq.upper, +1);
  b.estimate = std::clamp(static_cast<double>(std::sqrt(static_cast<ld>(sumsq.estimate) / n)), b.lower, b.upper);
  return b;
}

}  // namespace momenta
