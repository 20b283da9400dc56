// BufferedArray::SummarizeBatch: a batch of ranges (random, empty,
// single-element, whole-array, adjacent bins, duplicates) gives, range by
// range, exactly what Summarize gives for that range alone, and what a plain
// loop over the cells gives; over every backend, with and without extremes,
// across chunks of the batch; a range outside the array is named.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 50'000;
const Stat kStats[] = {Stat::kCount, Stat::kSum, Stat::kMean, Stat::kVar, Stat::kMoments, Stat::kMin, Stat::kMax};

// Every statistic of `summary` that `range` can give, as exact values.
std::vector<long double> Answers(const RangeSummary& summary, const IndexRange& range, bool extremes) {
  std::vector<long double> out;
  for (Stat s : kStats) {
    if (!extremes && (s == Stat::kMin || s == Stat::kMax)) continue;
    auto a = ComputeStat(s, StatParams{}, summary, range.begin, DType::kF8);
    if (!a.ok()) {
      out.push_back(-1e300L);  // the same failure both ways (the mean of nothing)
      continue;
    }
    out.insert(out.end(), a->values.begin(), a->values.end());
  }
  return out;
}

struct Case {
  IoKind io;
  bool extremes;
};

class SummarizeBatchTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    seed_ = testing::TestSeed();
    std::mt19937_64 rng(seed_);
    path_ = dir_.File("a.npy");
    values_.resize(kLength);
    for (uint64_t i = 0; i < kLength; ++i) {
      values_[i] = i % 7000 < 3000 ? 0.0 : std::normal_distribution<double>(5.0, 100.0)(rng);  // runs of zeros
    }
    ASSERT_OK(testing::WriteF8Array(path_, values_));
    BufferedArrayOptions options;
    options.io.writable = true;
    options.tree.leaf_span = 256;
    options.tree.fanout = 8;
    options.tree.ram_budget = 4096;  // most levels in the disk tier
    ASSERT_OK(BufferedArray::Open(path_, options));
  }

  std::unique_ptr<BufferedArray> OpenReader(bool cache_first = true) {
    BufferedArrayOptions options;
    options.io.kind = GetParam().io;
    options.io.cache_first = cache_first;
    if (!cache_first) options.io.direct_min_bytes = 0;  // every aligned read O_DIRECT, however short
    auto ba = BufferedArray::Open(path_, options);
    if (!ba.ok()) {
      if (GetParam().io == IoKind::kUring)
        skip_ = ba.status().ToString();
      else
        ADD_FAILURE() << ba.status().ToString();
      return nullptr;
    }
    return std::move(ba).value();
  }

  uint64_t seed_ = 0;
  testing::ScratchDir dir_;
  std::string path_;
  std::vector<double> values_;
  std::string skip_;
};

TEST_P(SummarizeBatchTest, EachRangeAsAloneAndAsAScan) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  auto ba = OpenReader();
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ASSERT_NE(ba, nullptr);
  std::mt19937_64 rng(seed_ + 1);
  std::vector<IndexRange> ranges = {{0, kLength},           {0, 0},     {kLength, kLength}, {17, 18},
                                    {kLength - 1, kLength}, {255, 257}, {256, 512},         {3000, 7000}};
  for (int k = 0; k < 300; ++k) {  // random ranges, past one chunk of a batch (256)
    IndexRange r{rng() % (kLength + 1), rng() % (kLength + 1)};
    if (r.begin > r.end) std::swap(r.begin, r.end);
    ranges.push_back(r);
  }
  for (uint64_t e = 1000; e + 1000 <= kLength; e += 1000) ranges.push_back({e, e + 1000});  // adjacent bins
  ranges.push_back(ranges[20]);                                                             // a duplicate
  const bool extremes = GetParam().extremes;
  std::vector<RangeSummary> batch;
  std::vector<QueryCost> costs;
  std::vector<uint64_t> as_of;
  ASSERT_OK(ba->SummarizeBatch(ranges, extremes, &batch, &costs, &as_of));
  ASSERT_EQ(batch.size(), ranges.size());
  ASSERT_EQ(costs.size(), ranges.size());
  ASSERT_EQ(as_of.size(), ranges.size());
  for (size_t k = 0; k < ranges.size(); ++k) {
    const IndexRange& r = ranges[k];
    SCOPED_TRACE("range " + std::to_string(r.begin) + ":" + std::to_string(r.end));
    QueryCost alone_cost;
    auto alone = ba->Summarize(r.begin, r.end, extremes, &alone_cost);
    ASSERT_OK(alone);
    EXPECT_EQ(Answers(batch[k], r, extremes), Answers(*alone, r, extremes));
    // A range's own reads are what it plans alone; a query's cost is what its
    // batch of one asked of the devices (its end pieces' pages merged).
    std::vector<RangeSummary> one;
    std::vector<QueryCost> one_costs;
    QueryCost one_read;
    ASSERT_OK(ba->SummarizeBatch({&r, 1}, extremes, &one, &one_costs, nullptr, &one_read));
    EXPECT_EQ(costs[k].array_bytes, one_costs[0].array_bytes);
    EXPECT_EQ(costs[k].tier_bytes, one_costs[0].tier_bytes);
    EXPECT_EQ(alone_cost.array_bytes, one_read.array_bytes);
    EXPECT_EQ(alone_cost.tier_bytes, one_read.tier_bytes);
    EXPECT_LE(alone_cost.array_bytes, costs[k].array_bytes);
    long double sum = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = r.begin; i < r.end; ++i) {
      sum += values_[i];
      lo = std::min(lo, values_[i]);
      hi = std::max(hi, values_[i]);
    }
    auto got = ComputeStat(Stat::kSum, StatParams{}, batch[k], r.begin, DType::kF8);
    ASSERT_OK(got);
    EXPECT_NEAR(static_cast<double>(got->values[0]), static_cast<double>(sum), 1e-9 * (1 + std::fabs(sum)));
    if (extremes && r.size() > 0) {
      EXPECT_EQ(ComputeStat(Stat::kMin, StatParams{}, batch[k], r.begin, DType::kF8)->values[0], lo);
      EXPECT_EQ(ComputeStat(Stat::kMax, StatParams{}, batch[k], r.begin, DType::kF8)->values[0], hi);
    }
    if (::testing::Test::HasFailure()) break;
  }
}

TEST_P(SummarizeBatchTest, ARangeOutsideTheArrayIsNamedAndNothingIsAnswered) {
  auto ba = OpenReader();
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  ASSERT_NE(ba, nullptr);
  std::vector<RangeSummary> out(1, RangeSummary(2));
  const std::vector<IndexRange> ranges = {{0, 10}, {5, kLength + 1}};
  const Status s = ba->SummarizeBatch(ranges, false, &out);
  EXPECT_EQ(s.code(), Status::Code::kOutOfRange);
  EXPECT_NE(s.ToString().find("range #2 5:50001 is outside the array (length 50000)"), std::string::npos)
      << s.ToString();
  const std::vector<IndexRange> reversed = {{10, 5}};
  EXPECT_EQ(ba->SummarizeBatch(reversed, false, &out).code(), Status::Code::kOutOfRange);
  ASSERT_OK(ba->SummarizeBatch({}, false, &out));
  EXPECT_TRUE(out.empty());
}

// The default path (short reads through the page cache, kept there) and the
// device path (every aligned read O_DIRECT) give the same answers bit for
// bit: with the array's pages evicted, cached, and mixed.
TEST_P(SummarizeBatchTest, CacheFirstAndDirectReadsAgree) {
  if (GetParam().io != IoKind::kUring) GTEST_SKIP() << "reading the page cache first is io_uring's";
  SCOPED_TRACE("seed " + std::to_string(seed_));
  auto warm = OpenReader(/*cache_first=*/true);
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  auto direct = OpenReader(/*cache_first=*/false);
  ASSERT_NE(warm, nullptr);
  ASSERT_NE(direct, nullptr);
  std::mt19937_64 rng(seed_ + 2);
  std::vector<IndexRange> ranges;
  for (int k = 0; k < 200; ++k) {
    IndexRange r{rng() % (kLength + 1), rng() % (kLength + 1)};
    if (r.begin > r.end) std::swap(r.begin, r.end);
    ranges.push_back(r);
  }
  const bool extremes = GetParam().extremes;
  auto evict = [&] {
    const int fd = ::open(path_.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::fdatasync(fd), 0);
    ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    ::close(fd);
  };
  std::vector<RangeSummary> expected, got;
  ASSERT_OK(direct->SummarizeBatch(ranges, extremes, &expected));
  for (const char* state : {"evicted", "half cached", "cached"}) {
    SCOPED_TRACE(state);
    evict();
    if (std::string(state) != "evicted") {  // through the page cache: the whole file, or its first half
      const int fd = ::open(path_.c_str(), O_RDONLY);
      ASSERT_GE(fd, 0);
      std::vector<char> bytes(kLength * 8 + 4096);
      const size_t n = std::string(state) == "cached" ? bytes.size() : bytes.size() / 2;
      ASSERT_GT(::pread(fd, bytes.data(), n, 0), 0);
      ::close(fd);
    }
    ASSERT_OK(warm->SummarizeBatch(ranges, extremes, &got));
    for (size_t k = 0; k < ranges.size(); ++k)
      ASSERT_EQ(Answers(got[k], ranges[k], extremes), Answers(expected[k], ranges[k], extremes))
          << "range " << ranges[k].begin << ":" << ranges[k].end;
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return std::string(IoKindName(info.param.io)) + (info.param.extremes ? "_extremes" : "_shorter_side");
}

INSTANTIATE_TEST_SUITE_P(Backends, SummarizeBatchTest,
                         ::testing::Values(Case{IoKind::kPread, false}, Case{IoKind::kPread, true},
                                           Case{IoKind::kMmap, false}, Case{IoKind::kUring, false},
                                           Case{IoKind::kUring, true}),
                         CaseName);

}  // namespace
}  // namespace momenta
