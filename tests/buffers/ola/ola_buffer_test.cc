// OlaBuffer's shape, the worked example of REFERENCE.md §4.6, the refusals
// (orders past the limit, non-finite values, statistics Ola cannot serve),
// in-place against explicit levels, and the statistics derived from it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "buffers/ola/ola_buffer.h"
#include "buffers/ola/ola_statistics.h"
#include "tests/assert_ok.h"
#include "tests/buffers/ola/ola_reference.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::OlaAnswer;

OlaOptions Options(int nodes, uint64_t bin, int max_levels = 0) {
  OlaOptions o;
  o.nodes = nodes;
  o.bin = bin;
  o.max_levels = max_levels;
  return o;
}

// a_i = i, n = 9, b = 2, N = 2 (REFERENCE.md §4.6; the authors' code prints the same).
TEST(OlaBufferTest, WorkedExample) {
  std::vector<double> a = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  auto one = OlaBuffer::Build(Options(2, 2, 1), a);
  ASSERT_OK(one);
  EXPECT_EQ(std::vector<double>(one->slots().begin(), one->slots().end()), (std::vector<double>{0.5, 4, 8, 12, 11.5}));
  auto hier = OlaBuffer::Build(Options(2, 2), a);
  ASSERT_OK(hier);
  EXPECT_EQ(hier->layout().levels(), 3);
  EXPECT_EQ(std::vector<double>(hier->slots().begin(), hier->slots().end()),
            (std::vector<double>{10.5, 4, 16, 12, 25.5}));
  // Σ_{i<5} a_i = 10 both ways; cells read: the level-0 windows only.
  EXPECT_EQ(OlaAnswer(*one, a, 0, 5).moment(0), 10);
  EXPECT_EQ(OlaAnswer(*hier, a, 0, 5).moment(0), 10);
}

TEST(OlaBufferTest, ShapeAndPadding) {
  // n = 1000, b = 4, N = 4: b^L <= 999/3 gives L = 4 (256), m_4 = ⌈999/256⌉ = 4.
  auto layout = OlaLayout::Make(Options(4, 4), 1000);
  ASSERT_OK(layout);
  EXPECT_EQ(layout->levels(), 4);
  EXPECT_EQ(layout->padded_length(), 4u * 256 + 1);
  EXPECT_EQ(layout->slots(), 1024u / 4 + 1);  // n'/b + 1: one number per bin
  auto explicit_levels = OlaLayout::Make(OlaOptions{4, 4, 0, OlaStorage::kExplicitLevels}, 1000);
  ASSERT_OK(explicit_levels);
  EXPECT_EQ(explicit_levels->slots(), 257u + 65 + 17 + 5);
  // A tiny array is padded up to N − 1 top bins.
  auto tiny = OlaLayout::Make(Options(8, 3), 2);
  ASSERT_OK(tiny);
  EXPECT_EQ(tiny->levels(), 1);
  EXPECT_EQ(tiny->padded_length(), 7u * 3 + 1);
  // The growth cap: N = 8, b = 2 has Λ > 2.15 (the one-sided stencils), so
  // Λ^L <= 1e4 allows no more than 12 levels whatever the length.
  auto capped = OlaLayout::Make(Options(8, 2), uint64_t{1} << 40);
  ASSERT_OK(capped);
  EXPECT_LE(capped->growth(), kOlaMaxGrowth);
  EXPECT_GT(capped->growth() * capped->lebesgue(), kOlaMaxGrowth);
}

TEST(OlaBufferTest, RefusesOrdersPastTheLimit) {
  auto ten = OlaLayout::Make(Options(10, 4), 1000);
  ASSERT_FALSE(ten.ok());
  EXPECT_EQ(ten.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(ten.status().ToString().find("order 9 needs 10 nodes"), std::string::npos) << ten.status().ToString();
  EXPECT_NE(ten.status().ToString().find("orders up to 7"), std::string::npos) << ten.status().ToString();
  auto odd = OlaLayout::Make(Options(3, 4), 1000);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().ToString().find("N = 3"), std::string::npos) << odd.status().ToString();
  EXPECT_FALSE(OlaLayout::Make(Options(4, 1), 1000).ok());
}

TEST(OlaBufferTest, RefusesNonFiniteValues) {
  std::vector<double> a(50, 1.0);
  a[17] = std::numeric_limits<double>::quiet_NaN();
  auto bad = OlaBuffer::Build(Options(4, 3), a);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("cell 17 is not finite"), std::string::npos) << bad.status().ToString();
  a[17] = 1;
  auto ola = OlaBuffer::Build(Options(4, 3), a);
  ASSERT_OK(ola);
  EXPECT_FALSE(ola->Update(3, 1, std::numeric_limits<double>::infinity()).ok());
  EXPECT_EQ(ola->Update(50, 1, 2).code(), Status::Code::kOutOfRange);
}

// In place and explicit levels hold the same numbers for everything a query
// reads, so their answers agree to the bit, built and after updates.
TEST(OlaBufferTest, InPlaceAnswersEqualExplicitLevels) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  const uint64_t n = 700;
  std::vector<double> a(n);
  for (double& x : a) x = unit(rng);
  for (int nodes : {2, 4, 8}) {
    OlaOptions in_place = Options(nodes, 3), levels = in_place;
    levels.storage = OlaStorage::kExplicitLevels;
    auto x = OlaBuffer::Build(in_place, a), y = OlaBuffer::Build(levels, a);
    ASSERT_OK(x);
    ASSERT_OK(y);
    ASSERT_EQ(x->layout().levels(), y->layout().levels());
    std::vector<double> b = a;
    std::uniform_int_distribution<uint64_t> cell(0, n - 1);
    for (int round = 0; round < 2; ++round) {
      for (int k = 0; k < 500; ++k) {
        uint64_t p = cell(rng), q = cell(rng) + 1;
        if (p > q) std::swap(p, q);
        const IndexMoments mx = OlaAnswer(*x, b, p, q), my = OlaAnswer(*y, b, p, q);
        for (int t = 0; t < nodes; ++t) ASSERT_EQ(mx.moment(t), my.moment(t)) << p << " " << q << " " << t;
      }
      for (int k = 0; k < 2000; ++k) {
        const uint64_t i = cell(rng);
        const double v = unit(rng);
        ASSERT_OK(x->Update(i, b[i], v));
        ASSERT_OK(y->Update(i, b[i], v));
        b[i] = v;
      }
    }
  }
}

// Statistics from Ola's range moments match those from the exact moments of
// the range; those it cannot serve name the buffer that can.
TEST(OlaBufferTest, StatisticsAndRefusals) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> pos(0.5, 2);
  const uint64_t n = 5000;
  std::vector<double> a(n);
  for (double& x : a) x = pos(rng);
  auto ola = OlaBuffer::Build(Options(4, 8), a);
  ASSERT_OK(ola);
  const uint64_t p = 1234, q = 4321;
  const IndexMoments got = OlaAnswer(*ola, a, p, q);
  const IndexMoments want = IndexMoments::Of(3, std::span<const double>(a.data() + p, q - p));
  StatParams params;
  params.degree = 2;
  for (Stat s : {Stat::kSum, Stat::kCount, Stat::kMean, Stat::kMoment, Stat::kMoments, Stat::kCom, Stat::kSpread,
                 Stat::kPolyfit}) {
    auto x = OlaStat(s, params, got, p);
    auto y = ComputeIndexStat(s, params, want, p);
    ASSERT_OK(x) << StatName(s);
    ASSERT_OK(y) << StatName(s);
    ASSERT_EQ(x->values.size(), y->values.size());
    for (size_t k = 0; k < x->values.size(); ++k)
      EXPECT_NEAR(static_cast<double>(x->values[k]), static_cast<double>(y->values[k]),
                  1e-9 * std::fabs(static_cast<double>(y->values[k])) + 1e-12)
          << StatName(s) << " " << k;
  }
  auto mean = OlaStat(Stat::kMean, params, got, p);
  EXPECT_NEAR(static_cast<double>(mean->values[0]), static_cast<double>(Sum(want) / (q - p)), 1e-12);
  for (Stat s : {Stat::kVar, Stat::kStd, Stat::kMin, Stat::kMax}) {
    auto r = OlaStat(s, params, got, p);
    ASSERT_FALSE(r.ok()) << StatName(s);
    EXPECT_NE(r.status().ToString().find("--buffer hbb"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().ToString().find(std::string(StatName(s))), std::string::npos);
  }
  // An order above N − 1 is the moment algebra's error.
  StatParams high;
  high.order = 4;
  EXPECT_FALSE(OlaStat(Stat::kMoment, high, got, p).ok());
  EXPECT_FALSE(OlaStat(Stat::kMean, params, OlaAnswer(*ola, a, 10, 10), 10).ok());
}

}  // namespace
}  // namespace momenta
