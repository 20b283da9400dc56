#include "buffers/range_summary.h"

#include <cmath>
#include <cstring>
#include <limits>

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
  std::span<const double> v(scratch, count);
  RangeSummary s(order);
  s.index = IndexMoments::Of(order, v);
  s.values = ValueMoments::Of(v);
  s.extremes = Extremes::Of(v);
  if (DTypeIsInteger(t)) s.exact_sum = ExactSum(t, bytes, count);
  return s;
}

RangeSummary Merge(const RangeSummary& left, const RangeSummary& right) {
  RangeSummary r(left.index.order());
  r.index = Merge(left.index, right.index);
  r.values = Merge(left.values, right.values);
  r.extremes = Merge(left.extremes, right.extremes);
  r.exact_sum = left.exact_sum + right.exact_sum;
  return r;
}

RangeSummary UnmergeRight(const RangeSummary& total, const RangeSummary& left) {
  RangeSummary r(total.index.order());
  r.index = UnmergeRight(total.index, left.index);
  r.values = Unmerge(total.values, left.values);
  r.exact_sum = total.exact_sum - left.exact_sum;
  return r;
}

RangeSummary UnmergeLeft(const RangeSummary& total, const RangeSummary& right) {
  RangeSummary r(total.index.order());
  r.index = UnmergeLeft(total.index, right.index);
  r.values = Unmerge(total.values, right.values);
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
};

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

void NodeCodec::Encode(const RangeSummary& s, double* node) const {
  const Slots at(order_);
  s.index.Store(std::span<double>(node, at.terms), std::span<double>(node + at.terms, at.terms));
  StoreValues(s.values, node, at);
  node[at.min()] = s.extremes.min;
  node[at.max()] = s.extremes.max;
  std::memcpy(node + at.exact(), &s.exact_sum, sizeof(Int128));
  node[at.drift()] = 0;
}

RangeSummary NodeCodec::Decode(const double* node, uint64_t count) const {
  const Slots at(order_);
  RangeSummary s(order_);
  s.index = IndexMoments::Load(order_, count, std::span<const double>(node, at.terms),
                               std::span<const double>(node + at.terms, at.terms));
  s.values = LoadValues(node, count, at);
  s.extremes = GetExtremes(node);
  std::memcpy(&s.exact_sum, node + at.exact(), sizeof(Int128));
  return s;
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
  IndexMoments index = IndexMoments::Load(order_, count, std::span<const double>(node, at.terms),
                                          std::span<const double>(node + at.terms, at.terms));
  index.ApplyDelta(offset, static_cast<long double>(new_value) - old_value);
  index.Store(std::span<double>(node, at.terms), std::span<double>(node + at.terms, at.terms));

  ValueMoments values = LoadValues(node, count, at);
  const long double before = values.sum_of_squared_deviations();
  values.ApplyUpdate(old_value, new_value);
  StoreValues(values, node, at);
  // Each update rounds S2 (and S1, whose square enters the central sum) at
  // a few ulps of the larger of the two magnitudes it passed through.
  const long double after = values.sum_of_squared_deviations();
  const long double s1 = std::fabs(values.sum_of_deviations());
  const long double ulp = std::numeric_limits<long double>::epsilon();
  const long double drift = node[at.drift()] +
                            8 * ulp * (std::max(before, after) + s1 * s1 / std::max<uint64_t>(count, 1));
  node[at.drift()] = static_cast<double>(drift);
  out.drifted = drift > kDriftLimit * values.central_sum_of_squares() && drift > 0 &&
                !(std::isnan(drift) || std::isinf(drift));

  Int128 sum;
  std::memcpy(&sum, node + at.exact(), sizeof(Int128));
  sum += exact_delta;
  std::memcpy(node + at.exact(), &sum, sizeof(Int128));

  // NaN values are ignored by extremes (as Extremes::Of does).
  Extremes e = GetExtremes(node);
  out.extremes_may_shrink = (old_value == e.min || old_value == e.max) && new_value != old_value;
  if (new_value < e.min) e.min = new_value;
  if (new_value > e.max) e.max = new_value;
  SetExtremes(node, e);
  return out;
}

}  // namespace momenta
