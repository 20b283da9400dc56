#include "buffers/range_summary.h"

#include <cstring>

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

void NodeCodec::Encode(const RangeSummary& s, double* node) const {
  const size_t terms = static_cast<size_t>(order_) + 1;
  s.index.Store(std::span<double>(node, terms), std::span<double>(node + terms, terms));
  s.values.Store(std::span<double>(node + 2 * terms, 3));
  node[2 * terms + 3] = s.extremes.min;
  node[2 * terms + 4] = s.extremes.max;
  std::memcpy(node + 2 * terms + 5, &s.exact_sum, sizeof(Int128));
}

RangeSummary NodeCodec::Decode(const double* node, uint64_t count) const {
  const size_t terms = static_cast<size_t>(order_) + 1;
  RangeSummary s(order_);
  s.index = IndexMoments::Load(order_, count, std::span<const double>(node, terms),
                               std::span<const double>(node + terms, terms));
  s.values = ValueMoments::Load(count, std::span<const double>(node + 2 * terms, 3));
  s.extremes = GetExtremes(node);
  std::memcpy(&s.exact_sum, node + 2 * terms + 5, sizeof(Int128));
  return s;
}

Extremes NodeCodec::GetExtremes(const double* node) const {
  const size_t terms = static_cast<size_t>(order_) + 1;
  return Extremes{node[2 * terms + 3], node[2 * terms + 4]};
}

void NodeCodec::SetExtremes(double* node, const Extremes& e) const {
  const size_t terms = static_cast<size_t>(order_) + 1;
  node[2 * terms + 3] = e.min;
  node[2 * terms + 4] = e.max;
}

bool NodeCodec::ApplyUpdate(double* node, uint64_t count, uint64_t offset, double old_value,
                            double new_value, Int128 exact_delta) const {
  const size_t terms = static_cast<size_t>(order_) + 1;
  IndexMoments index = IndexMoments::Load(order_, count, std::span<const double>(node, terms),
                                          std::span<const double>(node + terms, terms));
  index.ApplyDelta(offset, static_cast<long double>(new_value) - old_value);
  index.Store(std::span<double>(node, terms), std::span<double>(node + terms, terms));
  ValueMoments values = ValueMoments::Load(count, std::span<const double>(node + 2 * terms, 3));
  values.ApplyUpdate(old_value, new_value);
  values.Store(std::span<double>(node + 2 * terms, 3));
  Int128 sum;
  std::memcpy(&sum, node + 2 * terms + 5, sizeof(Int128));
  sum += exact_delta;
  std::memcpy(node + 2 * terms + 5, &sum, sizeof(Int128));
  Extremes e = GetExtremes(node);
  // NaN values are ignored by extremes (as Extremes::Of does).
  bool exact = true;
  if (old_value == e.min || old_value == e.max) exact = (new_value == old_value);
  if (new_value < e.min) e.min = new_value;
  if (new_value > e.max) e.max = new_value;
  SetExtremes(node, e);
  return exact;
}

}  // namespace momenta
