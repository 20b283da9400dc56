// The four-lane (AVX2) cell sums give the same bits as the two-vector (SSE2)
// ones, so a tree built on one CPU is recomputed exactly on another: index
// moments of every order, their magnitudes, value moments and whole
// summaries of every dtype, over lengths that end mid-vector and mid-block,
// on smooth, offset (1e9 + noise) and spiky data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "buffers/algebra/moments.h"
#include "buffers/algebra/range_summary.h"

namespace momenta {
namespace {

bool SameBits(long double a, long double b) { return std::memcmp(&a, &b, 10) == 0; }

class WideKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SetWideKernelsForTesting(true)) GTEST_SKIP() << "this CPU has no AVX2: only the two-lane kernels run";
  }
  void TearDown() override { SetWideKernelsForTesting(true); }

  static std::vector<double> Data(size_t n, int kind, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0, 1);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
      switch (kind) {
        case 0:
          v[i] = normal(rng);
          break;
        case 1:
          v[i] = 1e9 + normal(rng);
          break;
        default:
          v[i] = rng() % 97 == 0 ? 1e15 * normal(rng) : 1e-3 * normal(rng);
          break;
      }
    }
    return v;
  }
};

TEST_F(WideKernelsTest, IndexAndValueMomentsAreBitForBitTheSame) {
  const uint64_t seed = 20261205;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{7}, size_t{255}, size_t{256}, size_t{257},
                   size_t{1000}, size_t{4099}}) {
    for (int kind = 0; kind < 3; ++kind) {
      const std::vector<double> v = Data(n, kind, seed + n * 3 + kind);
      for (int order = 0; order <= kMaxMomentOrder; ++order) {
        SCOPED_TRACE("n " + std::to_string(n) + " kind " + std::to_string(kind) + " order " + std::to_string(order));
        ASSERT_TRUE(SetWideKernelsForTesting(false));
        const IndexMoments narrow = IndexMoments::Of(order, v);
        const IndexMoments narrow_abs = IndexMoments::OfMagnitudes(order, v);
        const ValueMoments narrow_values = ValueMoments::Of(v);
        ASSERT_TRUE(SetWideKernelsForTesting(true));
        const IndexMoments wide = IndexMoments::Of(order, v);
        const IndexMoments wide_abs = IndexMoments::OfMagnitudes(order, v);
        const ValueMoments wide_values = ValueMoments::Of(v);
        for (int j = 0; j <= order; ++j) {
          EXPECT_TRUE(SameBits(narrow.moment(j), wide.moment(j))) << "M_" << j;
          EXPECT_TRUE(SameBits(narrow_abs.moment(j), wide_abs.moment(j))) << "|M|_" << j;
        }
        EXPECT_EQ(narrow_values.shift(), wide_values.shift());
        EXPECT_TRUE(SameBits(narrow_values.sum_of_deviations(), wide_values.sum_of_deviations()));
        EXPECT_TRUE(SameBits(narrow_values.sum_of_squared_deviations(), wide_values.sum_of_squared_deviations()));
      }
    }
  }
}

// Whole summaries of f4 and integer cells (converted, then the same kernels):
// the same bits, and integer sums exact both ways.
TEST_F(WideKernelsTest, SummariesOfEveryDtypeAreTheSame) {
  std::mt19937_64 rng(77);
  std::printf("seed 77\n");
  const size_t n = 1029;
  std::vector<int32_t> i4(n);
  std::vector<float> f4(n);
  std::vector<uint8_t> u1(n);
  for (size_t k = 0; k < n; ++k) {
    i4[k] = static_cast<int32_t>(rng());
    f4[k] = static_cast<float>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 7.0f;
    u1[k] = static_cast<uint8_t>(rng());
  }
  std::vector<double> scratch(n);
  struct Case {
    DType t;
    const void* bytes;
  };
  for (const Case& c : {Case{DType::kI4, i4.data()}, Case{DType::kF4, f4.data()}, Case{DType::kU1, u1.data()}}) {
    ASSERT_TRUE(SetWideKernelsForTesting(false));
    const RangeSummary a = RangeSummary::OfElements(2, c.t, static_cast<const char*>(c.bytes), n, scratch.data());
    ASSERT_TRUE(SetWideKernelsForTesting(true));
    const RangeSummary b = RangeSummary::OfElements(2, c.t, static_cast<const char*>(c.bytes), n, scratch.data());
    for (int j = 0; j <= 2; ++j) EXPECT_TRUE(SameBits(a.index.moment(j), b.index.moment(j)));
    EXPECT_TRUE(SameBits(a.values.sum_of_squared_deviations(), b.values.sum_of_squared_deviations()));
    EXPECT_EQ(a.exact_sum, b.exact_sum);
  }
  Int128 exact = 0;
  for (int32_t x : i4) exact += x;
  EXPECT_EQ(
      RangeSummary::OfElements(2, DType::kI4, reinterpret_cast<const char*>(i4.data()), n, scratch.data()).exact_sum,
      exact);
}

}  // namespace
}  // namespace momenta
