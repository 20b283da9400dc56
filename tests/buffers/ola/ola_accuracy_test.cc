// OlaBuffer against a long-double scan: every range of small arrays
// (N ∈ {2, 4, 6, 8}, several b, lengths of the form m·b + 1 and not), random
// ranges of a large array, and after 10^6 random updates. The bound:
// tests/buffers/ola/ola_reference.h (buffers/ola/ola_buffer.h states it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "buffers/ola/ola_buffer.h"
#include "tests/assert_ok.h"
#include "tests/buffers/ola/ola_reference.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::BoundMagnitudes;
using testing::OlaAnswer;
using testing::ReferenceMoments;

// Data with a spread of scales: integers, fractions, a few large values.
std::vector<double> RandomData(std::mt19937_64& rng, uint64_t n) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<double> a(n);
  for (double& x : a) {
    const int k = kind(rng);
    x = k < 4 ? std::round(unit(rng) * 1000) : k < 9 ? unit(rng) : unit(rng) * 1e6;
  }
  return a;
}

// Worst |error| / magnitude over [p, q) and every order; fails past 1e-9.
long double CheckRange(const OlaBuffer& ola, const std::vector<double>& a, const std::vector<long double>& exact_a,
                       const std::vector<long double>& mag, uint64_t p, uint64_t q) {
  const IndexMoments got = OlaAnswer(ola, a, p, q);
  EXPECT_EQ(got.count(), q - p);
  const int N = ola.layout().nodes();
  const auto want = ReferenceMoments(exact_a, p, q, N);
  const auto scale = BoundMagnitudes(mag, ola.layout(), p, q);
  long double worst = 0;
  for (int t = 0; t < N; ++t) {
    const long double err = std::fabs(got.moment(t) - want[t]);
    const long double allowed = kReferenceRelativeError * scale[t];
    EXPECT_LE(err, allowed) << "[" << p << ", " << q << ") order " << t << ": got "
                            << static_cast<double>(got.moment(t)) << " want " << static_cast<double>(want[t]);
    if (err > allowed) return 1;  // one report per range
    if (scale[t] > 0) worst = std::max(worst, err / scale[t]);
  }
  return worst;
}

struct Shape {
  int nodes;
  uint64_t bin;
};

// Every range [p, q), 0 <= p <= q <= n, of arrays of several lengths.
TEST(OlaAccuracyTest, EveryRangeOfSmallArrays) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  std::printf("OlaAccuracyTest.EveryRangeOfSmallArrays seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (Shape shape :
       {Shape{2, 2}, Shape{2, 5}, Shape{4, 2}, Shape{4, 3}, Shape{4, 4}, Shape{6, 3}, Shape{8, 2}, Shape{8, 3}}) {
    // m·b + 1 lengths and others; below N·b + 1 the array is padded up.
    for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{7}, shape.bin * 9 + 1, uint64_t{40}, uint64_t{67}}) {
      for (int max_levels : {1, 0}) {
        OlaOptions options;
        options.nodes = shape.nodes;
        options.bin = shape.bin;
        options.max_levels = max_levels;
        const std::vector<double> a = RandomData(rng, n);
        auto ola = OlaBuffer::Build(options, a);
        ASSERT_OK(ola);
        const std::vector<long double> exact(a.begin(), a.end());
        std::vector<long double> mag(n);
        for (uint64_t i = 0; i < n; ++i) mag[i] = std::fabs(exact[i]);
        long double worst = 0;
        for (uint64_t p = 0; p <= n; ++p)
          for (uint64_t q = p; q <= n; ++q) {
            worst = std::max(worst, CheckRange(*ola, a, exact, mag, p, q));
            if (::testing::Test::HasFailure()) {
              ADD_FAILURE() << "N " << shape.nodes << " b " << shape.bin << " n " << n << " levels "
                            << ola->layout().levels();
              return;
            }
          }
        EXPECT_LT(worst, 1e-12L) << "N " << shape.nodes << " b " << shape.bin << " n " << n;
      }
    }
  }
}

// A large array whose length is not m·b^L + 1: random ranges, a third of
// them with an end in the first or last few top-level bins.
TEST(OlaAccuracyTest, RandomRangesOfALargeArray) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  std::printf("OlaAccuracyTest.RandomRangesOfALargeArray seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const uint64_t n = 200'003;
  const std::vector<double> a = RandomData(rng, n);
  const std::vector<long double> exact(a.begin(), a.end());
  std::vector<long double> mag(n);
  for (uint64_t i = 0; i < n; ++i) mag[i] = std::fabs(exact[i]);
  for (Shape shape : {Shape{2, 64}, Shape{4, 16}, Shape{8, 8}}) {
    OlaOptions options;
    options.nodes = shape.nodes;
    options.bin = shape.bin;
    auto ola = OlaBuffer::Build(options, a);
    ASSERT_OK(ola);
    const uint64_t edge = shape.nodes * ola->layout().span(ola->layout().levels()) * 2;
    std::uniform_int_distribution<uint64_t> any(0, n), near(0, std::min(edge, n));
    long double worst = 0;
    for (int k = 0; k < 120; ++k) {
      uint64_t p = any(rng), q = any(rng);
      if (k % 3 == 1) p = near(rng);
      if (k % 3 == 2) q = n - near(rng);
      if (p > q) std::swap(p, q);
      worst = std::max(worst, CheckRange(*ola, a, exact, mag, p, q));
      if (::testing::Test::HasFailure()) return;
    }
    std::printf("  N %d b %llu levels %d: worst error / magnitude %.3Le\n", shape.nodes,
                static_cast<unsigned long long>(shape.bin), ola->layout().levels(), worst);
  }
}

// 10^6 random updates, each also applied to the reference; then every range
// of the array against the scan and against a fresh build's answers.
TEST(OlaAccuracyTest, AMillionUpdates) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  std::printf("OlaAccuracyTest.AMillionUpdates seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (Shape shape : {Shape{4, 3}, Shape{8, 2}}) {
    const uint64_t n = 150;  // 100 + 50: padded at every level
    OlaOptions options;
    options.nodes = shape.nodes;
    options.bin = shape.bin;
    std::vector<double> a = RandomData(rng, n);
    auto ola = OlaBuffer::Build(options, a);
    ASSERT_OK(ola);
    std::vector<long double> mag(n);
    for (uint64_t i = 0; i < n; ++i) mag[i] = std::fabs(a[i]);
    std::uniform_int_distribution<uint64_t> cell(0, n - 1);
    const int updates = shape.nodes == 8 ? 400'000 : 600'000;  // 10^6 together
    for (int u = 0; u < updates; ++u) {
      const uint64_t i = cell(rng);
      const double v = RandomData(rng, 1)[0];
      ASSERT_OK(ola->Update(i, a[i], v));
      a[i] = v;
      mag[i] = std::max(mag[i], static_cast<long double>(std::fabs(v)));
    }
    const std::vector<long double> exact(a.begin(), a.end());
    auto fresh = OlaBuffer::Build(options, a);
    ASSERT_OK(fresh);
    long double worst = 0, drift = 0;
    for (uint64_t p = 0; p <= n; ++p)
      for (uint64_t q = p; q <= n; ++q) {
        worst = std::max(worst, CheckRange(*ola, a, exact, mag, p, q));
        if (::testing::Test::HasFailure()) return;
      }
    for (uint64_t s = 0; s < ola->slots().size(); ++s)
      drift = std::max<long double>(
          drift, std::fabs(ola->slots()[s] - fresh->slots()[s]) / std::max(1.0, std::fabs(fresh->slots()[s])));
    std::printf("  N %d b %llu levels %d after %d updates: worst error / magnitude %.3Le, slot drift %.3Le\n",
                shape.nodes, static_cast<unsigned long long>(shape.bin), ola->layout().levels(), updates, worst, drift);
  }
}

}  // namespace
}  // namespace momenta
