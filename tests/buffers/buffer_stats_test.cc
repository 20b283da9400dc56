// BufferedArray::Stat and StatBatch (the facade answers statistics): the same
// answers, to the bit, as the summaries they are computed from; kind ola with
// statistics that follow from index moments reads the Ola buffer alone (no
// partial leaf of the tree); a statistic without an answer names the array.
// Also the buffer behind the facade (MomentBuffer) of either kind as the
// tree's header names it.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 5000;

BufferedArrayOptions Options(int ola_nodes, bool writable = true) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.tree.order = ola_nodes > 0 ? 0 : 2;
  o.tree.leaf_span = 256;
  o.tree.fanout = 4;
  o.tree.ola_nodes = ola_nodes;
  o.tree.ola_bin = ola_nodes > 0 ? 8 : 0;
  return o;
}

void MakeArray(const std::string& path, DType dtype, uint64_t seed) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  auto f = ArrayFile::Create(path, dtype, shape, io);
  ASSERT_OK(f);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-500, 500);
  std::vector<Value> values;
  for (uint64_t i = 0; i < kLength; ++i)
    values.push_back(dtype == DType::kF8 ? Value::Float(value(rng) / 7.0) : Value::Int(value(rng)));
  ASSERT_OK((*f)->WriteValues(0, values));
}

void ExpectSameAnswers(const std::vector<StatAnswer>& got, const std::vector<StatAnswer>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    EXPECT_EQ(got[s].stat, want[s].stat);
    EXPECT_EQ(got[s].values, want[s].values) << StatName(got[s].stat);
    EXPECT_EQ(got[s].is_integer, want[s].is_integer);
    EXPECT_TRUE(got[s].integer == want[s].integer);
  }
}

Result<std::vector<StatAnswer>> FromSummary(const RangeSummary& summary, const std::vector<Stat>& stats,
                                            const StatParams& params, uint64_t p, DType dtype) {
  std::vector<StatAnswer> out;
  for (Stat s : stats) {
    auto a = ComputeStat(s, params, summary, p, dtype);
    if (!a.ok()) return a.status();
    out.push_back(*a);
  }
  return out;
}

Result<std::vector<StatAnswer>> FromIndex(const IndexMoments& index, const std::vector<Stat>& stats,
                                          const StatParams& params, uint64_t p) {
  std::vector<StatAnswer> out;
  for (Stat s : stats) {
    auto a = ComputeIndexStat(s, params, index, p);
    if (!a.ok()) return a.status();
    out.push_back(*a);
  }
  return out;
}

// Kind hbb: every statistic from the range's full summary, as ComputeStat gives it.
TEST(BufferStatsTest, TreeKindAnswersFromTheSummary) {
  const uint64_t seed = testing::TestSeed();
  for (DType dtype : {DType::kF8, DType::kI8}) {
    testing::ScratchDir dir;
    const std::string path = dir.File("a.npy");
    MakeArray(path, dtype, seed);
    auto ba = BufferedArray::Open(path, Options(0, /*writable=*/false));
    ASSERT_OK(ba);
    const std::vector<Stat> stats = {Stat::kSum, Stat::kMean,    Stat::kVar, Stat::kMin,
                                     Stat::kMax, Stat::kMoments, Stat::kCom};
    const StatParams params;
    std::mt19937_64 rng(seed);
    std::vector<IndexRange> ranges;
    for (int k = 0; k < 40; ++k) {
      uint64_t p = rng() % kLength, q = rng() % kLength;
      if (p > q) std::swap(p, q);
      if (p == q) ++q;
      ranges.push_back({p, q});
    }
    RangeAnswers batch;
    ASSERT_OK((*ba)->StatBatch(ranges, stats, &batch));
    EXPECT_FALSE(batch.index_alone());
    for (size_t k = 0; k < ranges.size(); ++k) {
      auto summary = (*ba)->Summarize(ranges[k].begin, ranges[k].end, true);
      ASSERT_OK(summary);
      auto want = FromSummary(*summary, stats, params, ranges[k].begin, dtype);
      ASSERT_OK(want);
      auto got = (*ba)->Stat(ranges[k].begin, ranges[k].end, stats, params);
      ASSERT_OK(got);
      ExpectSameAnswers(*got, *want);
      auto from_batch = batch.Answer(k, stats, params);
      ASSERT_OK(from_batch);
      ExpectSameAnswers(*from_batch, *want);
    }
  }
}

// Kind ola: statistics that follow from index moments come from the Ola
// buffer alone (its reads, not the tree's partial leaves); others (var, an
// integer dtype's sum) from the full summary.
TEST(BufferStatsTest, OlaKindReadsItsIndexMomentsAloneWhereTheyServe) {
  const uint64_t seed = testing::TestSeed();
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path, DType::kF8, seed);
  { ASSERT_OK(BufferedArray::Open(path, Options(4))); }
  auto ba = BufferedArray::Open(path, Options(0, /*writable=*/false));
  ASSERT_OK(ba);
  ASSERT_EQ((*ba)->index_order(), 3);
  ASSERT_EQ((*ba)->tree_order(), 0);
  const std::vector<Stat> index_stats = {Stat::kSum, Stat::kMean, Stat::kMoments, Stat::kCom};
  const StatParams params;
  const IndexRange r{1234, 4321};
  QueryCost cost, index_cost;
  auto got = (*ba)->Stat(r.begin, r.end, index_stats, params, &cost);
  ASSERT_OK(got);
  auto index = (*ba)->SummarizeIndex(r.begin, r.end, nullptr, &index_cost);
  ASSERT_OK(index);
  auto want = FromIndex(*index, index_stats, params, r.begin);
  ASSERT_OK(want);
  ExpectSameAnswers(*got, *want);
  EXPECT_EQ(cost.array_bytes, index_cost.array_bytes) << "the Ola buffer's cells, no leaf of the tree";
  EXPECT_EQ(cost.tier_bytes, index_cost.tier_bytes);

  RangeAnswers batch;
  ASSERT_OK((*ba)->StatBatch({&r, 1}, index_stats, &batch));
  EXPECT_TRUE(batch.index_alone());
  auto from_batch = batch.Answer(0, index_stats, params);
  ASSERT_OK(from_batch);
  ExpectSameAnswers(*from_batch, *want);

  const std::vector<Stat> mixed = {Stat::kSum, Stat::kVar};
  ASSERT_OK((*ba)->StatBatch({&r, 1}, mixed, &batch));
  EXPECT_FALSE(batch.index_alone()) << "var needs the tree's value moments";
  auto summary = (*ba)->Summarize(r.begin, r.end, false);
  ASSERT_OK(summary);
  auto want_mixed = FromSummary(*summary, mixed, params, r.begin, DType::kF8);
  ASSERT_OK(want_mixed);
  auto got_mixed = (*ba)->Stat(r.begin, r.end, mixed, params);
  ASSERT_OK(got_mixed);
  ExpectSameAnswers(*got_mixed, *want_mixed);
}

// A statistic without an answer names the array; a range outside it is
// OutOfRange before anything is read.
TEST(BufferStatsTest, ErrorsNameTheArray) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path, DType::kF8, testing::TestSeed());
  auto ba = BufferedArray::Open(path, Options(0, /*writable=*/false));
  ASSERT_OK(ba);
  const Stat mean[] = {Stat::kMean};
  auto empty = (*ba)->Stat(10, 10, mean, {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(empty.status().ToString().find(path), std::string::npos) << empty.status().ToString();
  EXPECT_NE(empty.status().ToString().find("the range is empty"), std::string::npos);
  auto outside = (*ba)->Stat(0, kLength + 1, mean, {});
  EXPECT_EQ(outside.status().code(), Status::Code::kOutOfRange);
}

// The buffer behind the facade is the kind the tree's header names, and
// follows a rebuild to the other kind.
TEST(BufferStatsTest, TheBufferFollowsTheKindOfTheTree) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path, DType::kF8, testing::TestSeed());
  auto ba = BufferedArray::Open(path, Options(0));
  ASSERT_OK(ba);
  EXPECT_EQ(OlaOf(**ba), nullptr);
  EXPECT_EQ((*ba)->index_order(), 2);
  auto refused = (*ba)->SummarizeIndex(0, 10);
  EXPECT_EQ(refused.status().code(), Status::Code::kInvalidArgument);
  ASSERT_OK((*ba)->Rebuild(Options(8).tree));
  ASSERT_NE(OlaOf(**ba), nullptr);
  EXPECT_EQ((*ba)->index_order(), 7);
  EXPECT_EQ((*ba)->leaf_span(), 256u);
  ASSERT_OK((*ba)->SummarizeIndex(0, 10));
  ASSERT_OK((*ba)->Rebuild(Options(0).tree));
  EXPECT_EQ(OlaOf(**ba), nullptr);
  EXPECT_FALSE(std::filesystem::exists((*ba)->sidecar() + "/ola")) << "kind hbb leaves no Ola file";
}

}  // namespace
}  // namespace momenta
