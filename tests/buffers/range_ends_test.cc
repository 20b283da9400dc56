// ReadRangeEnds and EndAnswer: the statistics first and last, read as the two
// end elements of each range, neighbouring ends in one request.
#include "buffers/range_ends.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

std::unique_ptr<ArrayFile> MakeArray(const std::string& path, DType dtype, const std::vector<Value>& values) {
  IoOptions io;
  io.kind = IoKind::kPread;
  io.writable = true;
  auto f = ArrayFile::Create(path, dtype, std::vector<uint64_t>{values.size()}, io);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE((*f)->WriteValues(0, values).ok());
  return std::move(f).value();
}

TEST(RangeEndsTest, EqualBinsReadTheirEndsInOneRequestPerEdge) {
  testing::ScratchDir dir;
  std::vector<Value> values;
  for (int i = 0; i < 100; ++i) values.push_back(Value::Float(i * 1.5));
  auto f = MakeArray(dir.File("a.npy"), DType::kF8, values);
  const std::vector<IndexRange> bins = {{0, 10}, {10, 20}, {20, 30}, {50, 51}, {60, 60}};
  std::vector<RangeEnds> ends;
  QueryCost read;
  ASSERT_OK(ReadRangeEnds(*f, bins, &ends, &read));
  ASSERT_EQ(ends.size(), bins.size());
  EXPECT_EQ(ends[1].first.f, 15.0);
  EXPECT_EQ(ends[1].last.f, 28.5);
  EXPECT_EQ(ends[3].first.f, 75.0);
  EXPECT_EQ(ends[3].last.f, 75.0);
  EXPECT_TRUE(ends[4].empty);
  // Elements 0, 9-10, 19-20, 29, 50: five requests, seven elements (50 read once).
  EXPECT_EQ(read.requests, 5u);
  EXPECT_EQ(read.array_bytes, 7u * 8);
  auto last = EndAnswer(Stat::kLast, ends[2]);
  ASSERT_OK(last);
  EXPECT_EQ(last->values[0], 43.5L);
  EXPECT_FALSE(last->is_integer);
  auto empty = EndAnswer(Stat::kFirst, ends[4]);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().ToString(), "Invalid argument: first: the range is empty");
}

TEST(RangeEndsTest, IntegersAreExactAndRangesOutsideAreRefused) {
  testing::ScratchDir dir;
  const int64_t big = (int64_t{1} << 53) + 1;  // not a double
  auto f = MakeArray(dir.File("i.npy"), DType::kI8, {Value::Int(big), Value::Int(-7), Value::Int(3)});
  std::vector<RangeEnds> ends;
  ASSERT_OK(ReadRangeEnds(*f, std::vector<IndexRange>{{0, 3}}, &ends, nullptr));
  auto first = EndAnswer(Stat::kFirst, ends[0]);
  ASSERT_OK(first);
  EXPECT_TRUE(first->is_integer);
  EXPECT_EQ(first->integer, big);
  EXPECT_EQ(EndAnswer(Stat::kLast, ends[0])->integer, 3);
  const Status outside = ReadRangeEnds(*f, std::vector<IndexRange>{{1, 4}}, &ends, nullptr);
  EXPECT_EQ(outside.code(), Status::Code::kOutOfRange);
}

TEST(RangeEndsTest, SummariesRefuseTheEndStatistics) {
  EXPECT_EQ(ParseStat("first", "--stat").value(), Stat::kFirst);
  EXPECT_EQ(StatName(Stat::kLast), "last");
  EXPECT_TRUE(NeedsEnds(std::vector<Stat>{Stat::kMean, Stat::kLast}));
  EXPECT_FALSE(NeedsEnds(std::vector<Stat>{Stat::kMean, Stat::kMax}));
  auto refused = ComputeStat(Stat::kFirst, {}, RangeSummary{}, 0, DType::kF8);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("first: a range's end element is read from the array"), std::string::npos);
}

}  // namespace
}  // namespace momenta
