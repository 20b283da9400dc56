#include "buffers/range_ends.h"

#include <algorithm>
#include <cassert>

#include "storage/io/io_backend.h"

namespace momenta {

Status ReadRangeEnds(ArrayFile& array, std::span<const IndexRange> ranges, std::vector<RangeEnds>* out,
                     QueryCost* read) {
  std::vector<uint64_t> at;  // every end element's index, sorted, once each
  at.reserve(2 * ranges.size());
  for (const IndexRange& r : ranges) {
    if (r.size() == 0) continue;
    MOMENTA_RETURN_IF_ERROR(array.CheckRange(r.begin, r.size()));
    at.push_back(r.begin);
    at.push_back(r.end - 1);
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  const size_t item = array.itemsize();
  std::vector<char> bytes(at.size() * item);
  std::vector<ReadRequest> requests;
  for (size_t k = 0; k < at.size(); ++k) {
    const bool extends = !requests.empty() && at[k] == at[k - 1] + 1;
    if (extends)
      requests.back().length += item;
    else
      requests.push_back({array.ByteOffset(at[k]), item, bytes.data() + k * item});
  }
  MOMENTA_RETURN_IF_ERROR(array.io().ReadBatch(requests));
  if (read) {
    read->array_bytes += bytes.size();
    read->requests += requests.size();
  }
  auto value_at = [&](uint64_t index) {
    const size_t k = static_cast<size_t>(std::lower_bound(at.begin(), at.end(), index) - at.begin());
    return DecodeValue(array.dtype(), bytes.data() + k * item);
  };
  out->assign(ranges.size(), RangeEnds{});
  for (size_t k = 0; k < ranges.size(); ++k)
    if (ranges[k].size() > 0) (*out)[k] = {false, value_at(ranges[k].begin), value_at(ranges[k].end - 1)};
  return Status::OK();
}

Result<StatAnswer> EndAnswer(Stat stat, const RangeEnds& ends) {
  assert(IsEndStat(stat));
  if (ends.empty) return Status::InvalidArgument(StatName(stat), "the range is empty");
  const Value& v = stat == Stat::kFirst ? ends.first : ends.last;
  StatAnswer a;
  a.stat = stat;
  a.values = {v.AsLongDouble()};
  if (v.kind != Value::Kind::kFloat) {
    a.is_integer = true;
    a.integer = v.kind == Value::Kind::kInt ? static_cast<Int128>(v.i) : static_cast<Int128>(v.u);
  }
  return a;
}

}  // namespace momenta
