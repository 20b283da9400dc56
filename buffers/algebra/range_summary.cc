#include "buffers/algebra/range_summary.h"

#include "buffers/algebra/node_delta.h"
#include "buffers/algebra/node_slots.h"

#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "storage/util/crc32c.h"

namespace momenta {
namespace {

// Σ a and Σ a² of `count` integer elements, exactly. Squares of cells of up
// to 32 bits (< 2^64 each) are summed in 128 bits (a run has fewer than 2^62
// cells: below 2^126), wider ones in 192 (buffers/algebra/exact_squares.h).
template <typename T>
void ExactSumsOf(const char* bytes, size_t count, Int128* sum, Int192* sumsq) {
  Int128 s = 0;
  if constexpr (sizeof(T) <= 4) {
    UInt128 q = 0;  // count < 2^62 squares below 2^64 each: < 2^126
    for (size_t k = 0; k < count; ++k) {
      T v;
      std::memcpy(&v, bytes + k * sizeof(T), sizeof(T));
      s += v;
      const int64_t w = v;
      const uint64_t m = static_cast<uint64_t>(w < 0 ? -w : w);  // |v| < 2^32
      q += m * m;
    }
    *sumsq = Int192::Of(static_cast<Int128>(q));
  } else {
    Int192 q;
    for (size_t k = 0; k < count; ++k) {
      T v;
      std::memcpy(&v, bytes + k * sizeof(T), sizeof(T));
      s += v;
      q += Int192::Square(v);
    }
    *sumsq = q;
  }
  *sum = s;
}

void ExactSums(DType t, const char* bytes, size_t count, Int128* sum, Int192* sumsq) {
  switch (t) {
    case DType::kI8:
      ExactSumsOf<int64_t>(bytes, count, sum, sumsq);
      break;
    case DType::kI4:
      ExactSumsOf<int32_t>(bytes, count, sum, sumsq);
      break;
    case DType::kI2:
      ExactSumsOf<int16_t>(bytes, count, sum, sumsq);
      break;
    case DType::kI1:
      ExactSumsOf<int8_t>(bytes, count, sum, sumsq);
      break;
    case DType::kU8:
      ExactSumsOf<uint64_t>(bytes, count, sum, sumsq);
      break;
    case DType::kU4:
      ExactSumsOf<uint32_t>(bytes, count, sum, sumsq);
      break;
    case DType::kU2:
      ExactSumsOf<uint16_t>(bytes, count, sum, sumsq);
      break;
    case DType::kU1:
      ExactSumsOf<uint8_t>(bytes, count, sum, sumsq);
      break;
    case DType::kF8:
    case DType::kF4:
      break;
  }
}

}  // namespace

RangeSummary RangeSummary::OfElements(int order, DType t, const char* bytes, size_t count, double* scratch,
                                      bool extremes) {
  // f8 cells that sit at 8-byte boundaries (a read's landing buffer, a
  // mapping: always, as a .npy header is a multiple of 64 bytes) are
  // summarized where they are; copying them first cost more than the sums.
  // Other cells are converted into the scratch first.
  const bool in_place = t == DType::kF8 && reinterpret_cast<uintptr_t>(bytes) % alignof(double) == 0;
  if (!in_place) DecodeDoubles(t, bytes, count, scratch);
  const std::span<const double> cells(in_place ? reinterpret_cast<const double*>(bytes) : scratch, count);
  RangeSummary s(order);
  s.index = IndexMoments::Of(order, cells);
  if (extremes) s.extremes = Extremes::Of(cells);  // skips NaN, keeps infinities: as stored
  if (DTypeIsInteger(t)) {
    s.values = ValueMoments::Of(cells);
    ExactSums(t, bytes, count, &s.exact_sum, &s.exact_sumsq);
    return s;
  }
  // M_0 sums every cell with weight 1: it is finite unless some cell is NaN
  // or infinite (or the sum overflows), so runs of finite values pay nothing.
  if (std::isfinite(s.index.moment(0))) {
    s.values = ValueMoments::Of(cells);
    return s;
  }
  // Some cell is not finite: count those apart and zero them in the scratch.
  if (in_place) std::memcpy(scratch, bytes, count * sizeof(double));
  std::span<double> v(scratch, count);
  std::vector<double> finite;
  finite.reserve(count);
  for (double& x : v) {
    if (std::isfinite(x)) {
      finite.push_back(x);
      continue;
    }
    if (std::isnan(x))
      ++s.nonfinite.nan;
    else if (x > 0)
      ++s.nonfinite.pos_inf;
    else
      ++s.nonfinite.neg_inf;
    x = 0;  // the index moments count it as 0
  }
  if (s.nonfinite.total() > 0) s.index = IndexMoments::Of(order, v);
  s.values = ValueMoments::Of(finite);
  return s;
}

namespace {

NonFiniteCounts Plus(const NonFiniteCounts& a, const NonFiniteCounts& b) {
  return {a.nan + b.nan, a.pos_inf + b.pos_inf, a.neg_inf + b.neg_inf};
}

NonFiniteCounts Minus(const NonFiniteCounts& a, const NonFiniteCounts& b) {
  return {a.nan - b.nan, a.pos_inf - b.pos_inf, a.neg_inf - b.neg_inf};
}

}  // namespace

RangeSummary Merge(const RangeSummary& left, const RangeSummary& right) {
  RangeSummary r(left.index.order());
  r.index = Merge(left.index, right.index);
  r.values = Merge(left.values, right.values);
  r.extremes = Merge(left.extremes, right.extremes);
  r.nonfinite = Plus(left.nonfinite, right.nonfinite);
  r.exact_sum = left.exact_sum + right.exact_sum;
  r.exact_sumsq = left.exact_sumsq + right.exact_sumsq;
  return r;
}

RangeSummary UnmergeRight(const RangeSummary& total, const RangeSummary& left) {
  RangeSummary r(total.index.order());
  r.index = UnmergeRight(total.index, left.index);
  r.values = Unmerge(total.values, left.values);
  r.nonfinite = Minus(total.nonfinite, left.nonfinite);
  r.exact_sum = total.exact_sum - left.exact_sum;
  r.exact_sumsq = total.exact_sumsq - left.exact_sumsq;
  return r;
}

RangeSummary UnmergeLeft(const RangeSummary& total, const RangeSummary& right) {
  RangeSummary r(total.index.order());
  r.index = UnmergeLeft(total.index, right.index);
  r.values = Unmerge(total.values, right.values);
  r.nonfinite = Minus(total.nonfinite, right.nonfinite);
  r.exact_sum = total.exact_sum - right.exact_sum;
  r.exact_sumsq = total.exact_sumsq - right.exact_sumsq;
  return r;
}

namespace {

using Slots = NodeSlots;

uint64_t GetU64(const double* node, size_t slot) { return NodeU64(node, slot); }

void PutU64(double* node, size_t slot, uint64_t v) { std::memcpy(node + slot, &v, sizeof v); }

NonFiniteCounts LoadCounts(const double* node, const Slots& at) { return NodeCounts(node, at); }

void StoreCounts(const NonFiniteCounts& c, double* node, const Slots& at) {
  PutU64(node, at.nan(), c.nan);
  PutU64(node, at.pos_inf(), c.pos_inf);
  PutU64(node, at.neg_inf(), c.neg_inf);
}

uint64_t FiniteCount(uint64_t count, const NonFiniteCounts& c) { return NodeFiniteCount(count, c); }

void Split(long double v, double* slot) {
  slot[0] = static_cast<double>(v);
  slot[1] = static_cast<double>(v - static_cast<long double>(slot[0]));
}

long double Join(const double* slot) { return static_cast<long double>(slot[0]) + static_cast<long double>(slot[1]); }

void StoreValues(const ValueMoments& v, double* node, const Slots& at) {
  node[at.shift()] = v.shift();
  Split(v.sum_of_deviations(), node + at.s1());
  Split(v.sum_of_squared_deviations(), node + at.s2());
}

ValueMoments LoadValues(const double* node, uint64_t count, const Slots& at) {
  if (count == 0) return ValueMoments();
  return ValueMoments::FromParts(count, node[at.shift()], Join(node + at.s1()), Join(node + at.s2()));
}

// The exact sum and sum of squares += the change (integer dtypes).
void AddExact(double* node, const Slots& at, const ExactChange& change) {
  if (change.is_zero()) return;
  Int128 sum;
  std::memcpy(&sum, node + at.exact(), sizeof(Int128));
  sum += change.sum;
  std::memcpy(node + at.exact(), &sum, sizeof(Int128));
  (Int192::Load(node + at.sumsq()) + change.squares).Store(node + at.sumsq());
}

}  // namespace

void NodeCodec::Encode(const RangeSummary& s, uint64_t slot, double* node, uint64_t children_mask) const {
  const Slots at(order_);
  s.index.Store(std::span<double>(node, at.terms), std::span<double>(node + at.terms, at.terms));
  StoreValues(s.values, node, at);
  node[at.min()] = s.extremes.min;
  node[at.max()] = s.extremes.max;
  std::memcpy(node + at.exact(), &s.exact_sum, sizeof(Int128));
  s.exact_sumsq.Store(node + at.sumsq());
  node[at.drift()] = 0;
  StoreCounts(s.nonfinite, node, at);
  PutU64(node, at.mask(), children_mask);
  Seal(slot, node);
}

RangeSummary NodeCodec::Decode(const double* node, uint64_t count) const {
  const Slots at(order_);
  RangeSummary s(order_);
  s.index = IndexMoments::Load(order_, count, std::span<const double>(node, at.terms),
                               std::span<const double>(node + at.terms, at.terms));
  s.nonfinite = LoadCounts(node, at);
  s.values = LoadValues(node, FiniteCount(count, s.nonfinite), at);
  s.extremes = GetExtremes(node);
  std::memcpy(&s.exact_sum, node + at.exact(), sizeof(Int128));
  s.exact_sumsq = Int192::Load(node + at.sumsq());
  return s;
}

RangeSummary NodeCodec::DecodeRun(const double* first, uint64_t count, uint64_t span, uint64_t last_span) const {
  assert(count >= 1 && last_span >= 1 && last_span <= span);
  assert(0 <= order_ && order_ <= kMaxMomentOrder);
  RangeSummary s;
  if (DecodeRunCompensated(order_, first, count, span, last_span, &s)) return s;
  return DecodeRunLongDouble(order_, first, count, span, last_span);
}

uint64_t NodeCodec::ComputeCheck(uint64_t slot, const double* node) const {
  const size_t covered = (doubles() - 1) * sizeof(double);
  if (!bind_slot_) return (uint64_t{1} << 32) | Crc32c(node, covered);
  char place[8];
  for (int k = 0; k < 8; ++k) place[k] = static_cast<char>(slot >> (8 * k));
  return (uint64_t{1} << 32) | Crc32cExtend(Crc32c(place, sizeof place), node, covered);
}

NodeCodec::NodeState NodeCodec::Classify(uint64_t slot, const double* node) const {
  const Slots at(order_);
  const uint64_t check = GetU64(node, at.check());
  if (check != 0) return check == ComputeCheck(slot, node) ? NodeState::kWritten : NodeState::kDamaged;
  for (size_t k = 0; k < at.check(); ++k)
    if (GetU64(node, k) != 0) return NodeState::kDamaged;
  return NodeState::kHole;
}

void NodeCodec::Seal(uint64_t slot, double* node) const {
  const Slots at(order_);
  PutU64(node, at.check(), ComputeCheck(slot, node));
}

uint64_t NodeCodec::Check(const double* node) const { return GetU64(node, Slots(order_).check()); }

uint64_t NodeCodec::ChildrenMask(const double* node) const { return GetU64(node, Slots(order_).mask()); }

void NodeCodec::SetChild(double* node, uint32_t child) const {
  const Slots at(order_);
  PutU64(node, at.mask(), GetU64(node, at.mask()) | (uint64_t{1} << child));
}

Extremes NodeCodec::GetExtremes(const double* node) const {
  const Slots at(order_);
  return Extremes{node[at.min()], node[at.max()]};
}

void NodeCodec::SetExtremes(double* node, const Extremes& e) const {
  const Slots at(order_);
  node[at.min()] = e.min;
  node[at.max()] = e.max;
}

NodeCodec::UpdateOutcome NodeCodec::ApplyUpdate(double* node, uint64_t count, uint64_t offset, double old_value,
                                                double new_value, const ExactChange& exact) const {
  const Slots at(order_);
  UpdateOutcome out;
  const bool old_finite = std::isfinite(old_value), new_finite = std::isfinite(new_value);
  // The index moments count a non-finite cell as 0.
  const long double delta =
      static_cast<long double>(new_finite ? new_value : 0.0) - static_cast<long double>(old_finite ? old_value : 0.0);
  if (delta != 0) {
    IndexMoments index = IndexMoments::Load(order_, count, std::span<const double>(node, at.terms),
                                            std::span<const double>(node + at.terms, at.terms));
    index.ApplyDelta(offset, delta);
    index.Store(std::span<double>(node, at.terms), std::span<double>(node + at.terms, at.terms));
  }

  NonFiniteCounts counts = LoadCounts(node, at);
  ValueMoments values = LoadValues(node, FiniteCount(count, counts), at);
  const long double before = values.sum_of_squared_deviations();
  if (old_finite && new_finite) {
    values.ApplyUpdate(old_value, new_value);
  } else {
    auto tally = [&](double v, int step) {
      uint64_t& c = std::isnan(v) ? counts.nan : v > 0 ? counts.pos_inf : counts.neg_inf;
      c += static_cast<uint64_t>(step);
    };
    if (old_finite) {
      if (values.count() > 0) values.Erase(old_value);
    } else {
      tally(old_value, -1);
    }
    if (new_finite)
      values.Insert(new_value);
    else
      tally(new_value, +1);
    StoreCounts(counts, node, at);
  }
  StoreValues(values, node, at);
  // Each update rounds S2 (and S1, whose square enters the central sum) at
  // a few ulps of the larger of the two magnitudes it passed through:
  //   drift += 8·ε_ld·(max(S2_before, S2_after) + S1_after² / max(n_after, 1))
  // (ε_ld the long double epsilon; S2_after after any re-centring, n the
  // finite count; the slot holds a double), and the node has drifted when
  //   drift > kDriftLimit·Σ(a − mean)²_after, drift finite and > 0.
  const long double after = values.sum_of_squared_deviations();
  const long double s1 = std::fabs(values.sum_of_deviations());
  const long double ulp = std::numeric_limits<long double>::epsilon();
  const long double drift =
      node[at.drift()] + 8 * ulp * (std::max(before, after) + s1 * s1 / std::max<uint64_t>(values.count(), 1));
  node[at.drift()] = static_cast<double>(drift);
  out.drifted =
      drift > kDriftLimit * values.central_sum_of_squares() && drift > 0 && !(std::isnan(drift) || std::isinf(drift));

  AddExact(node, at, exact);

  // Extremes skip NaN and keep infinities (as Extremes::Of does).
  Extremes e = GetExtremes(node);
  out.extremes_may_shrink = (old_value == e.min || old_value == e.max) && new_value != old_value;
  if (new_value < e.min) e.min = new_value;
  if (new_value > e.max) e.max = new_value;
  SetExtremes(node, e);
  return out;
}

double NodeCodec::Shift(const double* node) const { return node[Slots(order_).shift()]; }

NodeCodec::UpdateOutcome NodeCodec::ApplyDelta(double* node, uint64_t count, const NodeDelta& d) const {
  const Slots at(order_);
  UpdateOutcome out;
  // M_t += Σ_k Δ_k r_k^t (gathered about the node's start).
  const IndexMoments loaded = IndexMoments::Load(order_, count, std::span<const double>(node, at.terms),
                                                 std::span<const double>(node + at.terms, at.terms));
  MomentTerms terms = loaded.terms();
  for (int t = 0; t <= order_; ++t) terms[t] += d.index[t];
  IndexMoments::FromTerms(order_, count, terms)
      .Store(std::span<double>(node, at.terms), std::span<double>(node + at.terms, at.terms));

  const NonFiniteCounts counts = LoadCounts(node, at);
  ValueMoments values = LoadValues(node, FiniteCount(count, counts), at);
  NodeDelta about = d;
  about.RebaseTo(values.shift());
  const long double before = values.sum_of_squared_deviations();
  if (values.count() > 0) values.AddDeviations(about.s1, about.s2);
  StoreValues(values, node, at);
  // Drift (ApplyUpdate's rule, once): 8·ε_ld·(max(S2_before, S2_after) +
  // S1_after²/n) for the add into S2, plus 8·ε_ld·m·Σ|terms| for summing the
  // m terms first (recursive summation: at most (m − 1)·ε_ld·Σ|terms|).
  const long double after = values.sum_of_squared_deviations();
  const long double s1 = std::fabs(values.sum_of_deviations());
  const long double ulp = std::numeric_limits<long double>::epsilon();
  const long double drift =
      node[at.drift()] + 8 * ulp *
                             (std::max(before, after) + s1 * s1 / std::max<uint64_t>(values.count(), 1) +
                              static_cast<long double>(d.changes) * about.s2_magnitude);
  node[at.drift()] = static_cast<double>(drift);
  out.drifted =
      drift > kDriftLimit * values.central_sum_of_squares() && drift > 0 && !(std::isnan(drift) || std::isinf(drift));

  AddExact(node, at, d.exact);
  // Every old value is a cell of the node, so some was an extreme exactly
  // when the least (greatest) of them equals the node's min (max).
  Extremes e = GetExtremes(node);
  out.extremes_may_shrink = d.changes > 0 && (d.old_min == e.min || d.old_max == e.max);
  e.min = std::min(e.min, d.new_min);
  e.max = std::max(e.max, d.new_max);
  SetExtremes(node, e);
  return out;
}

std::string RangeProblem(int64_t p, int64_t q, uint64_t length) {
  const int64_t n = static_cast<int64_t>(length);
  auto side = [](const char* name, int64_t v) { return std::string(name) + " = " + std::to_string(v); };
  if (p < 0) return side("P", p - n) + " reaches before its start";
  if (q < 0) return side("Q", q - n) + " reaches before its start";
  if (p > n) return side("P", p) + " is past its end";
  if (q > n) return side("Q", q) + " is past its end";
  if (p > q) return "P > Q (" + std::to_string(p) + " > " + std::to_string(q) + ")";
  return "";
}

}  // namespace momenta
