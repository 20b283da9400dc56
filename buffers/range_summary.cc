#include "buffers/range_summary.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "storage/crc32c.h"

namespace momenta {
namespace {

Int128 ExactSum(DType t, const char* bytes, size_t count) {
  Int128 s = 0;
  auto sum = [&](auto tag) {
    using T = decltype(tag);
    for (size_t k = 0; k < count; ++k) {
      T v;
      std::memcpy(&v, bytes + k * sizeof(T), sizeof(T));
      s += v;
    }
  };
  switch (t) {
    case DType::kI8: sum(int64_t{}); break;
    case DType::kI4: sum(int32_t{}); break;
    case DType::kI2: sum(int16_t{}); break;
    case DType::kI1: sum(int8_t{}); break;
    case DType::kU8: sum(uint64_t{}); break;
    case DType::kU4: sum(uint32_t{}); break;
    case DType::kU2: sum(uint16_t{}); break;
    case DType::kU1: sum(uint8_t{}); break;
    case DType::kF8:
    case DType::kF4: break;
  }
  return s;
}

}  // namespace

RangeSummary RangeSummary::OfElements(int order, DType t, const char* bytes, size_t count,
                                      double* scratch) {
  DecodeDoubles(t, bytes, count, scratch);
  std::span<double> v(scratch, count);
  RangeSummary s(order);
  s.index = IndexMoments::Of(order, v);
  s.extremes = Extremes::Of(v);  // skips NaN, keeps infinities: as stored
  if (DTypeIsInteger(t)) {
    s.values = ValueMoments::Of(v);
    s.exact_sum = ExactSum(t, bytes, count);
    return s;
  }
  // M_0 sums every cell with weight 1: it is finite unless some cell is NaN
  // or infinite (or the sum overflows), so runs of finite values pay nothing.
  if (std::isfinite(s.index.moment(0))) {
    s.values = ValueMoments::Of(v);
    return s;
  }
  std::vector<double> finite;
  finite.reserve(count);
  for (double& x : v) {
    if (std::isfinite(x)) {
      finite.push_back(x);
      continue;
    }
    if (std::isnan(x)) ++s.nonfinite.nan;
    else if (x > 0) ++s.nonfinite.pos_inf;
    else ++s.nonfinite.neg_inf;
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
  return r;
}

RangeSummary UnmergeRight(const RangeSummary& total, const RangeSummary& left) {
  RangeSummary r(total.index.order());
  r.index = UnmergeRight(total.index, left.index);
  r.values = Unmerge(total.values, left.values);
  r.nonfinite = Minus(total.nonfinite, left.nonfinite);
  r.exact_sum = total.exact_sum - left.exact_sum;
  return r;
}

RangeSummary UnmergeLeft(const RangeSummary& total, const RangeSummary& right) {
  RangeSummary r(total.index.order());
  r.index = UnmergeLeft(total.index, right.index);
  r.values = Unmerge(total.values, right.values);
  r.nonfinite = Minus(total.nonfinite, right.nonfinite);
  r.exact_sum = total.exact_sum - right.exact_sum;
  return r;
}

namespace {

// Slots of a node of order J (see the table in range_summary.h).
struct Slots {
  explicit Slots(int order) : terms(static_cast<size_t>(order) + 1) {}
  size_t terms;
  size_t shift() const { return 2 * terms; }
  size_t s1() const { return 2 * terms + 1; }
  size_t s2() const { return 2 * terms + 3; }
  size_t min() const { return 2 * terms + 5; }
  size_t max() const { return 2 * terms + 6; }
  size_t exact() const { return 2 * terms + 7; }
  size_t drift() const { return 2 * terms + 9; }
  size_t nan() const { return 2 * terms + 10; }
  size_t pos_inf() const { return 2 * terms + 11; }
  size_t neg_inf() const { return 2 * terms + 12; }
  size_t mask() const { return 2 * terms + 13; }
  size_t check() const { return 2 * terms + 14; }
};

uint64_t GetU64(const double* node, size_t slot) {
  uint64_t v;
  std::memcpy(&v, node + slot, sizeof v);
  return v;
}

void PutU64(double* node, size_t slot, uint64_t v) { std::memcpy(node + slot, &v, sizeof v); }

NonFiniteCounts LoadCounts(const double* node, const Slots& at) {
  return {GetU64(node, at.nan()), GetU64(node, at.pos_inf()), GetU64(node, at.neg_inf())};
}

void StoreCounts(const NonFiniteCounts& c, double* node, const Slots& at) {
  PutU64(node, at.nan(), c.nan);
  PutU64(node, at.pos_inf(), c.pos_inf);
  PutU64(node, at.neg_inf(), c.neg_inf);
}

// Cells of a run of `count` that are finite (damaged counts are clamped:
// Classify reports the damage, decoding must not fault on it).
uint64_t FiniteCount(uint64_t count, const NonFiniteCounts& c) {
  const uint64_t off = c.total();
  return off <= count ? count - off : 0;
}

void Split(long double v, double* slot) {
  slot[0] = static_cast<double>(v);
  slot[1] = static_cast<double>(v - static_cast<long double>(slot[0]));
}

long double Join(const double* slot) {
  return static_cast<long double>(slot[0]) + static_cast<long double>(slot[1]);
}

void StoreValues(const ValueMoments& v, double* node, const Slots& at) {
  node[at.shift()] = v.shift();
  Split(v.sum_of_deviations(), node + at.s1());
  Split(v.sum_of_squared_deviations(), node + at.s2());
}

ValueMoments LoadValues(const double* node, uint64_t count, const Slots& at) {
  if (count == 0) return ValueMoments();
  return ValueMoments::FromParts(count, node[at.shift()], Join(node + at.s1()), Join(node + at.s2()));
}

}  // namespace

void NodeCodec::Encode(const RangeSummary& s, uint64_t slot, double* node, uint64_t children_mask) const {
  const Slots at(order_);
  s.index.Store(std::span<double>(node, at.terms), std::span<double>(node + at.terms, at.terms));
  StoreValues(s.values, node, at);
  node[at.min()] = s.extremes.min;
  node[at.max()] = s.extremes.max;
  std::memcpy(node + at.exact(), &s.exact_sum, sizeof(Int128));
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
  return s;
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

NodeCodec::UpdateOutcome NodeCodec::ApplyUpdate(double* node, uint64_t count, uint64_t offset,
                                                double old_value, double new_value,
                                                Int128 exact_delta) const {
  const Slots at(order_);
  UpdateOutcome out;
  const bool old_finite = std::isfinite(old_value), new_finite = std::isfinite(new_value);
  // The index moments count a non-finite cell as 0.
  const long double delta = static_cast<long double>(new_finite ? new_value : 0.0) -
                            static_cast<long double>(old_finite ? old_value : 0.0);
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
    if (new_finite) values.Insert(new_value);
    else tally(new_value, +1);
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
  const long double drift = node[at.drift()] +
                            8 * ulp * (std::max(before, after) + s1 * s1 / std::max<uint64_t>(values.count(), 1));
  node[at.drift()] = static_cast<double>(drift);
  out.drifted = drift > kDriftLimit * values.central_sum_of_squares() && drift > 0 &&
                !(std::isnan(drift) || std::isinf(drift));

  if (exact_delta != 0) {
    Int128 sum;
    std::memcpy(&sum, node + at.exact(), sizeof(Int128));
    sum += exact_delta;
    std::memcpy(node + at.exact(), &sum, sizeof(Int128));
  }

  // Extremes skip NaN and keep infinities (as Extremes::Of does).
  Extremes e = GetExtremes(node);
  out.extremes_may_shrink = (old_value == e.min || old_value == e.max) && new_value != old_value;
  if (new_value < e.min) e.min = new_value;
  if (new_value > e.max) e.max = new_value;
  SetExtremes(node, e);
  return out;
}

}  // namespace momenta
