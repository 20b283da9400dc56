// An overview's bins on a sparse array: the end pieces and leaf runs that lie
// in holes the RAM tier vouches for (a never-written node in a RAM-tier
// node's children mask) are neither read nor summed, and every bin still
// answers what its cells give and what the same range asked alone gives.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = uint64_t{1} << 20;
struct Region {
  uint64_t begin, end;
};
constexpr Region kRegions[] = {{100'000, 130'000}, {700'001, 705'003}};

long double StatOf(Stat s, const RangeSummary& summary, const IndexRange& r) {
  auto a = ComputeStat(s, StatParams{}, summary, r.begin, DType::kF8);
  return a.ok() ? a->values[0] : -1e300L;
}

TEST(SparseBinsTest, HolesAreNotReadAndBinsAnswerAsTheCells) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  testing::ScratchDir dir;
  const std::string path = dir.File("sparse.npy");
  std::vector<double> values(kLength, 0.0);
  {
    const uint64_t shape[] = {kLength};
    auto file = ArrayFile::Create(path, DType::kF8, shape, IoOptions{.kind = IoKind::kPread});
    ASSERT_OK(file);
    std::mt19937_64 rng(seed);
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    for (const Region& r : kRegions) {
      for (uint64_t i = r.begin; i < r.end; ++i) values[i] = std::normal_distribution<double>(1e6, 3.0)(rng);
      const size_t bytes = (r.end - r.begin) * sizeof(double);
      ASSERT_EQ(::pwrite(fd, values.data() + r.begin, bytes, static_cast<off_t>((*file)->ByteOffset(r.begin))),
                static_cast<ssize_t>(bytes));
    }
    ::close(fd);
  }
  BufferedArrayOptions build;
  build.io.writable = true;
  build.tree.leaf_span = 256;
  build.tree.fanout = 8;
  build.tree.ram_budget = 4096;  // levels 4 and 5 in RAM: the RAM tier vouches for level-3 nodes (16384 cells)
  ASSERT_OK(BufferedArray::Open(path, build));
  auto ba = BufferedArray::Open(path, BufferedArrayOptions{});
  ASSERT_OK(ba);

  std::vector<IndexRange> bins;
  for (uint64_t i = 0; i < 1000; ++i) bins.push_back({kLength * i / 1000, kLength * (i + 1) / 1000});
  std::vector<RangeSummary> out;
  std::vector<QueryCost> costs;
  ASSERT_OK((*ba)->SummarizeBatch(bins, /*need_extremes=*/true, &out, &costs));
  constexpr uint64_t kVouched = 256 * 8 * 8;  // cells under one level-3 node
  for (size_t k = 0; k < bins.size(); ++k) {
    const IndexRange& r = bins[k];
    SCOPED_TRACE("bin " + std::to_string(r.begin) + ":" + std::to_string(r.end));
    long double sum = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = r.begin; i < r.end; ++i) {
      sum += values[i];
      lo = std::min(lo, values[i]);
      hi = std::max(hi, values[i]);
    }
    EXPECT_NEAR(static_cast<double>(StatOf(Stat::kSum, out[k], r)), static_cast<double>(sum),
                1e-9 * (1 + std::fabs(sum)));
    EXPECT_EQ(StatOf(Stat::kMin, out[k], r), lo);
    EXPECT_EQ(StatOf(Stat::kMax, out[k], r), hi);
    auto alone = (*ba)->Summarize(r.begin, r.end, true);
    ASSERT_OK(alone);
    for (Stat s : {Stat::kCount, Stat::kSum, Stat::kMean, Stat::kVar, Stat::kMin, Stat::kMax})
      EXPECT_EQ(StatOf(s, out[k], r), StatOf(s, *alone, r)) << "stat " << static_cast<int>(s);
    // Far from the data (another level-3 node) no cell is read: the end
    // pieces are known zeros. (The disk-tier nodes of the hole runs are read
    // with the query's other reads, to be checked, but not summed.)
    bool far = true;
    for (const Region& g : kRegions)
      far = far && (r.end / kVouched < g.begin / kVouched || r.begin / kVouched > (g.end - 1) / kVouched);
    if (far) {
      EXPECT_EQ(costs[k].array_bytes, 0u);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace momenta
