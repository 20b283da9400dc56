// End pieces summed from the array's mapping (their pages cached) give the
// answers reading them gives, bit for bit: f8, f4 and i4 arrays, ranges that
// end in data and in holes, single queries and batches. A warm batch reads
// no array byte; a backend that does not map (map_resident off) reads them
// all. The file truncated between the residency check and the sums is a
// one-line IOError, not a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/range_query.h"
#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"
#include "storage/io/mapped_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 300'000;
// Data in [kDataBegin, kDataEnd) and [kTailBegin, kLength); holes elsewhere.
constexpr uint64_t kDataBegin = 20'000, kDataEnd = 150'000, kTailBegin = 260'000;

Value ValueOf(DType t, std::mt19937_64& rng, uint64_t i) {
  const double walk = std::normal_distribution<double>(0.0, 40.0)(rng) + static_cast<double>(i % 977);
  if (t == DType::kI4) return Value::Int(static_cast<int64_t>(std::floor(walk)));
  if (t == DType::kF4) return Value::Float(static_cast<double>(static_cast<float>(walk)));
  return Value::Float(walk);
}

// An array of dtype t with data in two regions, its buffer built (small
// leaves, most levels on disk), opened by a reader whose backend maps
// resident pieces or not.
void MakeArray(const std::string& path, DType t, uint64_t seed) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  auto array = ArrayFile::Create(path, t, shape, io);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  std::mt19937_64 rng(seed);
  for (auto [b, e] : {std::pair{kDataBegin, kDataEnd}, std::pair{kTailBegin, kLength}}) {
    std::vector<Value> v;
    for (uint64_t i = b; i < e; ++i) v.push_back(ValueOf(t, rng, i));
    EXPECT_TRUE((*array)->WriteValues(b, v).ok());
  }
  EXPECT_TRUE((*array)->Sync().ok());
  BufferedArrayOptions options;
  options.io.writable = true;
  options.tree.leaf_span = 2048;
  options.tree.fanout = 8;
  options.tree.ram_budget = 8192;
  EXPECT_TRUE(BufferedArray::Open(path, options).ok());
}

std::unique_ptr<BufferedArray> OpenReader(const std::string& path, bool map_resident) {
  BufferedArrayOptions reader;
  reader.io.kind = IoKind::kPread;
  reader.io.map_resident = map_resident;
  auto ba = BufferedArray::Open(path, reader);
  EXPECT_TRUE(ba.ok()) << ba.status().ToString();
  return ba.ok() ? std::move(ba).value() : nullptr;
}

// Ranges whose ends fall in data and in holes, short and long.
std::vector<IndexRange> Ranges(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<IndexRange> out = {{kDataBegin + 5, kDataEnd - 7},        {3, 17'000},  {kDataEnd - 10, kTailBegin + 9},
                                 {kDataBegin + 100, kDataBegin + 4100}, {0, kLength}, {151'000, 259'000},
                                 {kTailBegin + 1, kLength - 1}};
  for (int k = 0; k < 300; ++k) {
    IndexRange r{rng() % (kLength + 1), rng() % (kLength + 1)};
    if (r.begin > r.end) std::swap(r.begin, r.end);
    out.push_back(r);
  }
  return out;
}

void ExpectIdentical(const RangeSummary& a, const RangeSummary& b, int order) {
  ASSERT_EQ(a.count(), b.count());
  for (int j = 0; j <= order; ++j) EXPECT_EQ(a.index.moment(j), b.index.moment(j)) << "M_" << j;
  EXPECT_EQ(a.values.count(), b.values.count());
  EXPECT_EQ(a.values.shift(), b.values.shift());
  EXPECT_EQ(a.values.sum_of_deviations(), b.values.sum_of_deviations());
  EXPECT_EQ(a.values.sum_of_squared_deviations(), b.values.sum_of_squared_deviations());
  EXPECT_EQ(a.extremes.min, b.extremes.min);
  EXPECT_EQ(a.extremes.max, b.extremes.max);
  EXPECT_EQ(a.nonfinite, b.nonfinite);
  EXPECT_TRUE(a.exact_sum == b.exact_sum);
  EXPECT_TRUE(a.exact_sumsq == b.exact_sumsq);
}

class MappedPiecesTest : public ::testing::TestWithParam<DType> {
 protected:
  uint64_t seed_ = testing::TestSeed();
  testing::ScratchDir dir_;
};

TEST_P(MappedPiecesTest, MappedAnswersAreTheReadOnesBitForBit) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const std::string path = dir_.File("a.npy");
  MakeArray(path, GetParam(), seed_);
  auto reading = OpenReader(path, /*map_resident=*/false);
  auto mapping = OpenReader(path, /*map_resident=*/true);
  ASSERT_NE(reading, nullptr);
  ASSERT_NE(mapping, nullptr);
  const std::vector<IndexRange> ranges = Ranges(seed_ + 1);
  for (bool extremes : {false, true}) {
    // The reading reader's buffered reads leave every page it read cached.
    std::vector<RangeSummary> read_answers, mapped_answers;
    QueryCost read_cost, mapped_cost;
    ASSERT_OK(reading->SummarizeBatch(ranges, extremes, &read_answers, nullptr, nullptr, &read_cost));
    ASSERT_OK(mapping->SummarizeBatch(ranges, extremes, &mapped_answers, nullptr, nullptr, &mapped_cost));
    EXPECT_GT(read_cost.array_bytes, 0u);
    EXPECT_EQ(mapped_cost.array_bytes, 0u) << "every end piece was cached: none is read";
    ASSERT_EQ(read_answers.size(), mapped_answers.size());
    for (size_t k = 0; k < ranges.size(); ++k) {
      SCOPED_TRACE("range " + std::to_string(ranges[k].begin) + ":" + std::to_string(ranges[k].end));
      ExpectIdentical(read_answers[k], mapped_answers[k], TreeOf(*reading).order());
      // One query at a time too.
      auto one = mapping->Summarize(ranges[k].begin, ranges[k].end, extremes);
      ASSERT_OK(one);
      ExpectIdentical(read_answers[k], *one, TreeOf(*reading).order());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MappedPiecesTest, ::testing::Values(DType::kF8, DType::kF4, DType::kI4),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

// Drops the array's clean pages from the page cache (best effort): false
// when the kernel kept some, or the file could not be mapped.
bool DropArrayPages(const std::string& path) {
  auto map = MappedFile::Open(path, /*writable=*/false);
  if (!map.ok()) return false;
  (*map)->DropCleanPages(0, (*map)->size());
  return !(*map)->AnyPageCached(0, (*map)->size());
}

// Pieces whose pages are not cached are read; those that are, mapped: a batch
// mixing both answers as the reading reader does.
TEST(MappedPiecesPathTest, UncachedPiecesAreRead) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path, DType::kF8, seed);
  auto mapping = OpenReader(path, true);
  auto reading = OpenReader(path, false);
  ASSERT_NE(mapping, nullptr);
  if (!DropArrayPages(path)) GTEST_SKIP() << "the kernel kept the array's pages cached";
  const std::vector<IndexRange> ranges = Ranges(seed + 2);
  std::vector<RangeSummary> first, again, expected;
  QueryCost cold, warm;
  ASSERT_OK(mapping->SummarizeBatch(ranges, false, &first, nullptr, nullptr, &cold));
  EXPECT_GT(cold.array_bytes, 0u) << "nothing was cached: the pieces are read";
  ASSERT_OK(mapping->SummarizeBatch(ranges, false, &again, nullptr, nullptr, &warm));
  EXPECT_EQ(warm.array_bytes, 0u) << "what was read stays cached: summed from the mapping";
  ASSERT_OK(reading->SummarizeBatch(ranges, false, &expected));
  for (size_t k = 0; k < ranges.size(); ++k) {
    ExpectIdentical(expected[k], first[k], TreeOf(*mapping).order());
    ExpectIdentical(expected[k], again[k], TreeOf(*mapping).order());
  }
}

// Pages the reader's mapping holds survive a drop until it lets go of them
// (ReleaseMappedPagesOf): then the pieces are read again, a cold query.
TEST(MappedPiecesPathTest, ADropAfterReleasingTheMappingIsCold) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path, DType::kF8, seed);
  auto mapping = OpenReader(path, true);
  ASSERT_NE(mapping, nullptr);
  const std::vector<IndexRange> ranges = Ranges(seed + 3);
  std::vector<RangeSummary> out;
  QueryCost warm, cold;
  ASSERT_OK(mapping->SummarizeBatch(ranges, false, &out));  // reads what is not cached
  ASSERT_OK(mapping->SummarizeBatch(ranges, false, &out, nullptr, nullptr, &warm));
  if (warm.array_bytes != 0)
    GTEST_SKIP() << "the end pieces did not stay cached (" << warm.array_bytes << " bytes read)";
  ReleaseMappedPagesOf(path);
  if (!DropArrayPages(path)) GTEST_SKIP() << "the kernel kept the array's pages cached";
  ASSERT_OK(mapping->SummarizeBatch(ranges, false, &out, nullptr, nullptr, &cold));
  EXPECT_GT(cold.array_bytes, 0u);
}

// The file truncated under the mapping after the residency check: the sums
// fault, and the query is the IOError a read past the end gives.
TEST(MappedPiecesPathTest, TruncatedUnderTheMappingIsAnError) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path, DType::kF8, seed);
  auto mapping = OpenReader(path, true);
  ASSERT_NE(mapping, nullptr);
  const IndexRange range{kDataBegin + 5, kDataEnd - 7};
  std::vector<RangeSummary> out;
  QueryCost warm;
  ASSERT_OK(SummarizeRanges(TreeOf(*mapping), mapping->array(), {&range, 1}, false, &out, nullptr, {}, nullptr));
  ASSERT_OK(SummarizeRanges(TreeOf(*mapping), mapping->array(), {&range, 1}, false, &out, nullptr, {}, &warm));
  if (warm.array_bytes != 0) GTEST_SKIP() << "the end pieces did not stay cached";
  bool truncated = false;
  SetAfterResidencyCheckForTesting([&] { truncated = ::truncate(path.c_str(), 4096) == 0; });
  const Status s = SummarizeRanges(TreeOf(*mapping), mapping->array(), {&range, 1}, false, &out, nullptr, {}, nullptr);
  SetAfterResidencyCheckForTesting(nullptr);
  ASSERT_TRUE(truncated);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.ToString().find("file shrank?"), std::string::npos) << s.ToString();
  EXPECT_EQ(s.ToString().find('\n'), std::string::npos) << s.ToString();
  // Asked again, the pages are gone: the read path says the same.
  const Status again =
      SummarizeRanges(TreeOf(*mapping), mapping->array(), {&range, 1}, false, &out, nullptr, {}, nullptr);
  EXPECT_FALSE(again.ok());
}

}  // namespace
}  // namespace momenta
