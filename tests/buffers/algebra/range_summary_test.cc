// NodeCodec::DecodeRun (a query's run of sibling nodes in one pass) against
// the pairwise fold it replaces, Merge(Decode(node 0), Decode(node 1), ...),
// and against the summary of the run's cells themselves; and OfElements'
// in-place f8 path against its copying path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "buffers/algebra/node_slots.h"
#include "buffers/algebra/range_summary.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)";
}

// The cells of a run: one of several shapes, some with non-finite cells.
std::vector<double> RandomCells(std::mt19937_64& rng, size_t n, int shape) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> cells(n);
  double walk = 0;
  for (size_t i = 0; i < n; ++i) {
    switch (shape) {
      case 0:
        cells[i] = normal(rng);
        break;  // around 0
      case 1:
        cells[i] = 1e9 + normal(rng);
        break;  // large mean, small spread
      case 2:
        walk += normal(rng);
        cells[i] = 1e4 + walk;
        break;  // a random walk: node means differ
      case 3:
        cells[i] = (i / 7) % 3 == 0 ? 0 : 1e6 + normal(rng);
        break;  // runs of zeros beside large values
      default:
        cells[i] = static_cast<double>(static_cast<int>(rng() % 2001) - 1000);
        break;  // integers
    }
    const uint64_t r = rng() % 64;
    if (r == 0)
      cells[i] = std::numeric_limits<double>::quiet_NaN();
    else if (r == 1)
      cells[i] = kInf;
    else if (r == 2)
      cells[i] = -kInf;
  }
  return cells;
}

RangeSummary OfCells(int order, const std::vector<double>& cells, size_t first, size_t n) {
  std::vector<double> scratch(n + 1);
  return RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(cells.data() + first), n,
                                  scratch.data());
}

// Index moments within `rel` of the magnitudes Σ x^j |a_x| of the finite cells.
void ExpectIndexNear(const RangeSummary& got, const RangeSummary& want, const std::vector<double>& cells, int order,
                     ld rel, const std::string& what) {
  std::vector<double> finite(cells);
  for (double& c : finite)
    if (!std::isfinite(c)) c = 0;
  const IndexMoments magnitude = IndexMoments::OfMagnitudes(order, finite);
  ASSERT_EQ(got.index.count(), want.index.count()) << what;
  for (int j = 0; j <= order; ++j)
    EXPECT_LE(std::fabs(got.index.moment(j) - want.index.moment(j)), rel * magnitude.moment(j) + 1e-300L)
        << what << ": index moment " << j << " got " << static_cast<double>(got.index.moment(j)) << " want "
        << static_cast<double>(want.index.moment(j));
}

// Counts, non-finite counts, extremes and exact sums equal; mean and
// central sum of squares within `rel` of the reference.
void ExpectValuesNear(const RangeSummary& got, const RangeSummary& want, ld rel, const std::string& what) {
  EXPECT_EQ(got.nonfinite, want.nonfinite) << what;
  EXPECT_EQ(got.extremes.min, want.extremes.min) << what;
  EXPECT_EQ(got.extremes.max, want.extremes.max) << what;
  EXPECT_TRUE(got.exact_sum == want.exact_sum) << what;
  EXPECT_TRUE(got.exact_sumsq == want.exact_sumsq) << what;
  ASSERT_EQ(got.values.count(), want.values.count()) << what;
  if (want.values.count() == 0) return;
  const ld c = want.values.central_sum_of_squares();
  const ld mean = want.values.mean();
  EXPECT_LE(std::fabs(got.values.mean() - mean), rel * (std::fabs(mean) + std::sqrt(c))) << what << ": mean";
  EXPECT_LE(std::fabs(got.values.central_sum_of_squares() - c), rel * c + 1e-300L)
      << what << ": central sum of squares " << static_cast<double>(got.values.central_sum_of_squares()) << " want "
      << static_cast<double>(c);
  // The shift stays near the mean (the invariant Merge keeps).
  const ld d = got.values.mean() - got.values.shift();
  const ld ulp = 0x1p-52L * std::fabs(mean);  // the shift is a double
  EXPECT_LE(static_cast<ld>(got.values.count()) * (d * d - ulp * ulp), c + 1e-300L)
      << what << ": shift far from the mean";
}

TEST(RangeSummaryDecodeRunTest, EqualsThePairwiseFoldAndTheCells) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 300; ++trial) {
    const int order = static_cast<int>(rng() % (kMaxMomentOrder + 1));
    const int shape = static_cast<int>(rng() % 5);
    const uint64_t span = uint64_t{1} << (rng() % 7);  // 1 .. 64 cells per node
    const uint64_t count = 1 + rng() % 64;             // nodes in the run
    const uint64_t last_span = 1 + rng() % span;
    const size_t cells_n = (count - 1) * span + last_span;
    const std::vector<double> cells = RandomCells(rng, cells_n, shape);
    const NodeCodec codec(order);
    std::vector<double> nodes(count * codec.doubles());
    RangeSummary fold(order);
    for (uint64_t k = 0; k < count; ++k) {
      const uint64_t n = k + 1 == count ? last_span : span;
      codec.Encode(OfCells(order, cells, k * span, n), /*slot=*/k, nodes.data() + k * codec.doubles());
      fold = Merge(fold, codec.Decode(nodes.data() + k * codec.doubles(), n));
    }
    const RangeSummary got = codec.DecodeRun(nodes.data(), count, span, last_span);
    const std::string what = "trial " + std::to_string(trial) + " order " + std::to_string(order) + " shape " +
                             std::to_string(shape) + " span " + std::to_string(span) + " nodes " +
                             std::to_string(count) + " last " + std::to_string(last_span);
    ExpectIndexNear(got, fold, cells, order, 1e-15L, what + " vs fold");
    ExpectValuesNear(got, fold, 1e-12L, what + " vs fold");
    const RangeSummary direct = OfCells(order, cells, 0, cells_n);
    ExpectIndexNear(got, direct, cells, order, 1e-12L, what + " vs cells");
    ExpectValuesNear(got, direct, 1e-9L, what + " vs cells");
    if (::testing::Test::HasFailure()) return;
  }
}

// Never-written nodes (all zero) are runs of zeros, between written ones or alone.
TEST(RangeSummaryDecodeRunTest, HolesAreZeros) {
  const int order = 2;
  const NodeCodec codec(order);
  const uint64_t span = 16, count = 5;
  std::vector<double> cells(count * span, 0.0);
  for (uint64_t i = 2 * span; i < 3 * span; ++i) cells[i] = 1e6 + static_cast<double>(i);
  std::vector<double> nodes(count * codec.doubles(), 0.0);
  codec.Encode(OfCells(order, cells, 2 * span, span), 2, nodes.data() + 2 * codec.doubles());
  const RangeSummary got = codec.DecodeRun(nodes.data(), count, span, span);
  const RangeSummary want = OfCells(order, cells, 0, cells.size());
  ExpectIndexNear(got, want, cells, order, 1e-15L, "one written node among holes");
  ExpectValuesNear(got, want, 1e-12L, "one written node among holes");

  const std::vector<double> zeros(count * codec.doubles(), 0.0);
  const RangeSummary empty = codec.DecodeRun(zeros.data(), count, span, 3);
  EXPECT_EQ(empty.count(), (count - 1) * span + 3);
  EXPECT_EQ(empty.values.count(), empty.count());
  EXPECT_EQ(empty.values.mean(), 0);
  EXPECT_EQ(empty.values.central_sum_of_squares(), 0);
  for (int j = 0; j <= order; ++j) EXPECT_EQ(empty.index.moment(j), 0);
}

// The compensated kernel (doubles, four nodes a vector) and the long double
// one agree within the accuracy the fold test asks, on the same runs.
TEST(RangeSummaryDecodeRunTest, CompensatedKernelAgreesWithLongDouble) {
  if (!SetCompensatedRunsForTesting(true)) GTEST_SKIP() << "this CPU lacks AVX2 or FMA: no compensated kernel";
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const int order = static_cast<int>(rng() % (kMaxMomentOrder + 1));
    const int shape = static_cast<int>(rng() % 5);
    const uint64_t span = uint64_t{1} << (rng() % 7);
    const uint64_t count = 1 + rng() % 64;
    const uint64_t last_span = 1 + rng() % span;
    const std::vector<double> cells = RandomCells(rng, (count - 1) * span + last_span, shape);
    const NodeCodec codec(order);
    std::vector<double> nodes(count * codec.doubles());
    for (uint64_t k = 0; k < count; ++k)
      codec.Encode(OfCells(order, cells, k * span, k + 1 == count ? last_span : span), k,
                   nodes.data() + k * codec.doubles());
    SetCompensatedRunsForTesting(true);
    const RangeSummary compensated = codec.DecodeRun(nodes.data(), count, span, last_span);
    SetCompensatedRunsForTesting(false);
    const RangeSummary long_double = codec.DecodeRun(nodes.data(), count, span, last_span);
    SetCompensatedRunsForTesting(true);
    const std::string what = "trial " + std::to_string(trial) + " order " + std::to_string(order) + " shape " +
                             std::to_string(shape) + " nodes " + std::to_string(count);
    ExpectIndexNear(compensated, long_double, cells, order, 1e-15L, what);
    ExpectValuesNear(compensated, long_double, 1e-12L, what);
    if (::testing::Test::HasFailure()) return;
  }
}

// Terms that cancel: 2^64 + 1 − 2^64 is 1 in the compensated sums, where a
// long double sum (64-bit significand) rounds 2^64 + 1 to 2^64 and answers 0.
TEST(RangeSummaryDecodeRunTest, CompensatedSumsKeepWhatCancels) {
  if (!SetCompensatedRunsForTesting(true)) GTEST_SKIP() << "this CPU lacks AVX2 or FMA: no compensated kernel";
  const NodeCodec codec(0);
  const double m0[] = {0x1p64, 1.0, -0x1p64, 0.5, 0x1p70, -0x1p70};
  const uint64_t count = std::size(m0);
  std::vector<double> nodes(count * codec.doubles(), 0.0);
  for (uint64_t k = 0; k < count; ++k) nodes[k * codec.doubles()] = m0[k];  // M_0, its residue 0
  const RangeSummary got = codec.DecodeRun(nodes.data(), count, 1, 1);
  EXPECT_EQ(got.index.moment(0), 1.5L);
}

// Exact integer sums add exactly, past 2^64.
TEST(RangeSummaryDecodeRunTest, ExactSumsAddExactly) {
  const NodeCodec codec(1);
  const uint64_t count = 4, span = 2;
  std::vector<uint64_t> cells(count * span, ~uint64_t{0});
  std::vector<double> nodes(count * codec.doubles());
  std::vector<double> scratch(span);
  for (uint64_t k = 0; k < count; ++k)
    codec.Encode(RangeSummary::OfElements(1, DType::kU8, reinterpret_cast<const char*>(cells.data() + k * span), span,
                                          scratch.data()),
                 k, nodes.data() + k * codec.doubles());
  const RangeSummary got = codec.DecodeRun(nodes.data(), count, span, span);
  EXPECT_TRUE(got.exact_sum == static_cast<Int128>(count * span) * static_cast<Int128>(~uint64_t{0}));
}

// The in-place f8 path and the copying path (unaligned cells) agree exactly,
// with or without non-finite cells; without extremes the extremes stay empty.
TEST(RangeSummaryOfElementsTest, InPlaceAndCopiedAgree) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = 1 + rng() % 3000;
    const std::vector<double> cells = RandomCells(rng, n, static_cast<int>(rng() % 5));
    std::vector<char> shifted(n * sizeof(double) + 1);
    std::memcpy(shifted.data() + 1, cells.data(), n * sizeof(double));
    std::vector<double> scratch(n);
    const int order = static_cast<int>(rng() % (kMaxMomentOrder + 1));
    const RangeSummary aligned =
        RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(cells.data()), n, scratch.data());
    const RangeSummary copied = RangeSummary::OfElements(order, DType::kF8, shifted.data() + 1, n, scratch.data());
    const std::string what = "trial " + std::to_string(trial);
    ASSERT_EQ(aligned.nonfinite, copied.nonfinite) << what;
    EXPECT_EQ(aligned.extremes.min, copied.extremes.min) << what;
    EXPECT_EQ(aligned.extremes.max, copied.extremes.max) << what;
    ASSERT_EQ(aligned.values.count(), copied.values.count()) << what;
    EXPECT_EQ(aligned.values.shift(), copied.values.shift()) << what;
    EXPECT_EQ(aligned.values.sum_of_deviations(), copied.values.sum_of_deviations()) << what;
    EXPECT_EQ(aligned.values.sum_of_squared_deviations(), copied.values.sum_of_squared_deviations()) << what;
    for (int j = 0; j <= order; ++j) EXPECT_EQ(aligned.index.moment(j), copied.index.moment(j)) << what;
    const RangeSummary no_extremes = RangeSummary::OfElements(
        order, DType::kF8, reinterpret_cast<const char*>(cells.data()), n, scratch.data(), /*extremes=*/false);
    EXPECT_TRUE(no_extremes.extremes.empty()) << what;
    EXPECT_EQ(no_extremes.values.sum_of_squared_deviations(), aligned.values.sum_of_squared_deviations()) << what;
  }
}

}  // namespace
}  // namespace momenta
