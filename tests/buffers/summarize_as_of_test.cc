// SummarizeAsOf against exact states: three rounds of random updates at log
// times 1000, 2000, 3000, then random ranges summarized as of every time in
// between, checked against sums, extremes and index moments computed from
// the state the test kept for that time; and the refusals.
#include "buffers/summarize_as_of.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array_parts.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

// `ola_nodes` > 0: buffer kind ola (its index moments come from the Ola buffer).
std::unique_ptr<BufferedArray> Fresh(const std::string& path, uint64_t n, int ola_nodes = 0) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {n};
  auto f = ArrayFile::Create(path, DType::kI8, shape, io);
  EXPECT_OK(f);
  f->reset();
  BufferedArrayOptions options;
  options.io.writable = true;
  options.tree.leaf_span = 16;
  options.tree.ola_nodes = ola_nodes;
  options.tree.ola_bin = 8;
  auto ba = BufferedArray::Open(path, options);
  EXPECT_OK(ba);
  return std::move(*ba);
}

class SummarizeAsOfKindsTest : public ::testing::TestWithParam<int> {};

// Both buffer kinds (0: hbb; 4: an Ola buffer of 4 nodes, whose M_1 is within
// its bound, below 1e-9 · n · max|a| · n = 1 here, rather than exact).
TEST_P(SummarizeAsOfKindsTest, EqualsTheStateAtEachTime) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const uint64_t n = 1000;
  auto ba = Fresh(dir.File("a.npy"), n, GetParam());
  ASSERT_EQ(OlaOf(*ba) != nullptr, GetParam() > 0);
  std::map<int64_t, std::vector<int64_t>> states;
  std::vector<int64_t> now(n, 0);
  states[999] = now;
  for (int64_t t : {1000, 2000, 3000}) {
    std::vector<IndexedValue> ups;
    for (int k = 0; k < 200; ++k) {
      const uint64_t i = rng() % n;
      const int64_t v = static_cast<int64_t>(rng() % 2001) - 1000;
      ups.push_back({i, Value::Int(v), t});
      now[i] = v;
    }
    ASSERT_OK(ba->Apply(ups));
    states[t] = now;
    states[t + 500] = now;
  }
  for (const auto& [t, state] : states) {
    std::vector<IndexRange> ranges;
    for (int k = 0; k < 50; ++k) {
      uint64_t p = rng() % (n + 1), q = rng() % (n + 1);
      if (p > q) std::swap(p, q);
      ranges.push_back({p, q});
    }
    std::vector<RangeSummary> got;
    ASSERT_OK(SummarizeAsOf(*ba, ranges, t, /*need_extremes=*/true, &got));
    ASSERT_EQ(got.size(), ranges.size());
    for (size_t k = 0; k < ranges.size(); ++k) {
      SCOPED_TRACE("as of " + std::to_string(t) + ", range " + std::to_string(ranges[k].begin) + ":" +
                   std::to_string(ranges[k].end));
      Int128 sum = 0;
      long double m1 = 0;
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (uint64_t i = ranges[k].begin; i < ranges[k].end; ++i) {
        sum += state[i];
        m1 += static_cast<long double>(i - ranges[k].begin) * state[i];
        lo = std::min(lo, state[i]);
        hi = std::max(hi, state[i]);
      }
      EXPECT_EQ(got[k].count(), ranges[k].size());
      EXPECT_TRUE(got[k].exact_sum == sum);
      if (GetParam() == 0) {
        EXPECT_EQ(got[k].index.moment(1), m1);
      } else {
        EXPECT_NEAR(static_cast<double>(got[k].index.moment(1)), static_cast<double>(m1), 1.0);
        EXPECT_EQ(got[k].index.order(), GetParam() - 1);
      }
      if (ranges[k].size() > 0) {
        EXPECT_EQ(got[k].extremes.min, static_cast<double>(lo));
        EXPECT_EQ(got[k].extremes.max, static_cast<double>(hi));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SummarizeAsOfKindsTest, ::testing::Values(0, 4));

TEST(SummarizeAsOfTest, RefusesTimesThatGoBack) {
  ScratchDir dir;
  auto ba = Fresh(dir.File("a.npy"), 100);
  std::vector<IndexedValue> late = {{1, Value::Int(5), 2000}}, early = {{2, Value::Int(7), 1000}};
  ASSERT_OK(ba->Apply(late));
  ASSERT_OK(ba->Apply(early));
  const IndexRange all[] = {{0, 100}};
  std::vector<RangeSummary> got;
  Status s = SummarizeAsOf(*ba, all, 1500, true, &got);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.ToString().find("the log's times go back"), std::string::npos) << s.ToString();
  ASSERT_OK(SummarizeAsOf(*ba, all, 2000, true, &got));  // every record at or before: the current state
  EXPECT_TRUE(got[0].exact_sum == 12);
}

}  // namespace
}  // namespace momenta
