// Power sums, binomials and the polynomial fit (buffers/algebra/power_sums.h)
// directly, against exact integer references: Σ_{x<w} x^m summed in 128-bit
// integers and divided by w^m (w a power of two or small, so w^m is exact in
// long double: one rounding in the reference), C(n, k) from factorials, and
// fits to cells that are exactly a polynomial (random coefficients, seed
// printed) whose moments are summed exactly.
#include "buffers/algebra/power_sums.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
__extension__ typedef unsigned __int128 U128;
__extension__ typedef __int128 I128;

// Σ_{x=0}^{w-1} x^m exactly. REQUIRES: it fits 128 bits
U128 PowerSum(uint64_t w, int m) {
  U128 s = 0;
  for (uint64_t x = 0; x < w; ++x) {
    U128 p = 1;
    for (int k = 0; k < m; ++k) p *= x;
    s += p;
  }
  return s;
}

TEST(PowerSumsTest, ScaledPowerSumsAgainstExactIntegers) {
  // Both sides of the w = 32 switch (direct sum, Faulhaber's formula).
  const struct {
    uint64_t w;
    int max_m;  // the largest m whose Σ x^m fits 128 bits
  } cases[] = {{1, 16}, {2, 16}, {7, 16}, {31, 16}, {32, 16}, {33, 16}, {64, 16}, {1024, 11}, {uint64_t{1} << 20, 5}};
  for (const auto& c : cases) {
    for (int m = 0; m <= c.max_m; ++m) {
      SCOPED_TRACE("w " + std::to_string(c.w) + " m " + std::to_string(m));
      const ld want = static_cast<ld>(PowerSum(c.w, m)) / std::pow(static_cast<ld>(c.w), m);
      const ld got = ScaledPowerSum(c.w, m);
      EXPECT_LE(std::fabs(got - want), 16 * std::numeric_limits<ld>::epsilon() * want)
          << static_cast<double>(got) << " vs " << static_cast<double>(want);
    }
  }
}

TEST(PowerSumsTest, BinomialsAreFactorialRatios) {
  for (int n = 0; n < kBinomialRows; ++n)
    for (int k = 0; k < kBinomialRows; ++k) {
      uint64_t want = 0;
      if (k <= n) {
        want = 1;  // C(n, k) = Π_{i=1}^{k} (n − k + i) / i, exact at each step
        for (int i = 1; i <= k; ++i) want = want * static_cast<uint64_t>(n - k + i) / static_cast<uint64_t>(i);
      }
      EXPECT_EQ(kBinomial[n][k], static_cast<ld>(want)) << "C(" << n << ", " << k << ")";
    }
}

// Cells a_x = Σ c_m x^m with small integer coefficients: their moments
// Σ x^j a_x are integers summed exactly; the fit gives back the coefficients.
TEST(PowerSumsTest, FitsRecoverAnExactPolynomial) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 40; ++round) {
    const int degree = static_cast<int>(rng() % 5);  // up to 4: a condition number of about 5e5
    const uint64_t w = degree + 1 + rng() % 200;
    std::vector<int64_t> c(degree + 1);
    for (int64_t& v : c) v = static_cast<int64_t>(rng() % 21) - 10;
    SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round) + " degree " +
                 std::to_string(degree) + " w " + std::to_string(w));
    std::vector<ld> moments(degree + 1, 0);
    for (uint64_t x = 0; x < w; ++x) {
      I128 a = 0, p = 1;
      for (int m = 0; m <= degree; ++m, p *= static_cast<I128>(x)) a += c[m] * p;
      I128 xj = 1;
      for (int j = 0; j <= degree; ++j, xj *= static_cast<I128>(x)) moments[j] += static_cast<ld>(a * xj);
    }
    std::vector<ld> got(degree + 1);
    ASSERT_TRUE(FitPolynomial(w, moments, got));
    for (int m = 0; m <= degree; ++m) {
      // Scaled to t = x / w the coefficients are c_m w^m: compare there, relative to the largest.
      ld scale = 0;
      for (int k = 0; k <= degree; ++k) scale = std::max(scale, std::fabs(c[k] * std::pow(static_cast<ld>(w), k)));
      EXPECT_LE(std::fabs((got[m] - c[m]) * std::pow(static_cast<ld>(w), m)), 1e-9L * scale + 1e-12L)
          << "c_" << m << " = " << static_cast<double>(got[m]) << ", want " << c[m];
    }
  }
}

TEST(PowerSumsTest, TooFewCellsForTheDegreeAreSingular) {
  const std::vector<ld> moments = {3, 1, 1};  // two cells, a_0 = 2, a_1 = 1
  std::vector<ld> line(2), quadratic(3);
  ASSERT_TRUE(FitPolynomial(2, moments, line));
  EXPECT_NEAR(static_cast<double>(line[0]), 2.0, 1e-15);
  EXPECT_NEAR(static_cast<double>(line[1]), -1.0, 1e-15);
  EXPECT_FALSE(FitPolynomial(2, moments, quadratic));
}

}  // namespace
}  // namespace momenta
