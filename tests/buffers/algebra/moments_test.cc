// The moment algebra against exact references: brute-force long double loops,
// exact integer arithmetic on small integer cases, and the reference's worked
// examples (buffers/REFERENCE.md §1.1, §2.4) verbatim.
#include "buffers/algebra/moments.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
__extension__ typedef __int128 Int128;

const std::vector<double> kReferenceArray = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};

// ---- brute-force references ---------------------------------------------------

// Σ_x (x − center)^j a_x, j = 0..order, over a run whose start is x = 0.
MomentTerms BruteMoments(const std::vector<double>& a, int order, ld center = 0) {
  MomentTerms m{};
  for (size_t x = 0; x < a.size(); ++x) {
    ld term = a[x];
    const ld dx = static_cast<ld>(x) - center;
    for (int j = 0; j <= order; ++j) {
      m[j] += term;
      term *= dx;
    }
  }
  return m;
}

// Σ_x |x − center|^j |a_x|: the reference scale of a result's error.
MomentTerms BruteMagnitudes(const std::vector<double>& a, int order, ld center = 0) {
  MomentTerms m{};
  for (size_t x = 0; x < a.size(); ++x) {
    ld term = std::fabs(a[x]);
    const ld dx = std::fabs(static_cast<ld>(x) - center);
    for (int j = 0; j <= order; ++j) {
      m[j] += term;
      term *= dx;
    }
  }
  return m;
}

// Every order j <= order: |actual_j − expected_j| <= scale · bound_j.
void ExpectMomentsNear(const MomentTerms& actual, const MomentTerms& expected, const MomentTerms& bound, int order,
                       ld scale, const std::string& what) {
  for (int j = 0; j <= order; ++j) {
    EXPECT_LE(std::fabs(actual[j] - expected[j]), scale * bound[j])
        << what << ", order " << j << ": got " << static_cast<double>(actual[j]) << ", want "
        << static_cast<double>(expected[j]) << ", bound " << static_cast<double>(scale * bound[j]);
  }
}

std::vector<double> Slice(const std::vector<double>& a, size_t begin, size_t end) {
  return std::vector<double>(a.begin() + begin, a.begin() + end);
}

// Random values of a few shapes: signed noise, positive, large mean, integers.
std::vector<double> RandomValues(std::mt19937_64& rng, size_t n, int shape) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> integer(-1000, 1000);
  std::vector<double> a(n);
  for (double& v : a) {
    switch (shape % 4) {
      case 0:
        v = normal(rng);
        break;
      case 1:
        v = unit(rng) * 100;
        break;
      case 2:
        v = 1e9 + normal(rng);
        break;
      default:
        v = integer(rng);
        break;
    }
  }
  return a;
}

size_t RandomLength(std::mt19937_64& rng) {
  static const size_t kEdges[] = {0, 1, 2, 3, 4, 5, 7, 255, 256, 257, 511, 513, 1000};
  std::uniform_int_distribution<size_t> pick(0, 2 * std::size(kEdges));
  const size_t k = pick(rng);
  if (k < std::size(kEdges)) return kEdges[k];
  return std::uniform_int_distribution<size_t>(0, 5000)(rng);
}

#define SEEDED_RNG(rng)                                 \
  const uint64_t seed = ::momenta::testing::TestSeed(); \
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed)); \
  std::mt19937_64 rng(seed)

// ---- buffers/REFERENCE.md's worked examples, verbatim --------------------------

// §1.1: a = [3,1,4,1,5,9,2,6,5,3], range [2,7] → QM = (27, 76, 284); about
// c = 4.5, order 2: 6.25·27 + 2·(−2.5)·76 + 284 = 72.75.
TEST(MomentsReferenceTest, QueryMomentsSection1_1) {
  const IndexMoments range = IndexMoments::Of(2, Slice(kReferenceArray, 2, 8));
  EXPECT_EQ(range.count(), 6u);
  EXPECT_EQ(range.moment(0), 27);
  EXPECT_EQ(range.moment(1), 76);
  EXPECT_EQ(range.moment(2), 284);
  Result<ld> about = Moment(range, /*p=*/2, /*k=*/2, /*c=*/4.5L);
  ASSERT_OK(about);
  EXPECT_EQ(about.value(), 72.75L);
  EXPECT_EQ(about.value(), BruteMoments(Slice(kReferenceArray, 2, 8), 2, 2.5L)[2]);
}

// §2.4: b = 3, B_0 = (8, 9, 17), B_1 = (15, 23, 41), B_2 = (13, 16, 26), partial
// B_3 = (3, 0, 0). Query [2,7]: head (4, 0, 0); merge B_1 with δ = 1 →
// (19, 38, 102); tail [6,7] = (8, 6, 6) merged with δ = 4 → (27, 76, 284).
// Update a_4 += 2 (bin 1, offset 1): B_1 += 2·(1, 1, 1) → (17, 25, 43).
TEST(MomentsReferenceTest, BinBufferingSection2) {
  auto expect_tuple = [](const IndexMoments& t, ld m0, ld m1, ld m2) {
    EXPECT_EQ(t.moment(0), m0);
    EXPECT_EQ(t.moment(1), m1);
    EXPECT_EQ(t.moment(2), m2);
  };
  std::vector<IndexMoments> bins;
  for (size_t start = 0; start < kReferenceArray.size(); start += 3) {
    bins.push_back(IndexMoments::Of(2, Slice(kReferenceArray, start, std::min(start + 3, kReferenceArray.size()))));
  }
  ASSERT_EQ(bins.size(), 4u);
  expect_tuple(bins[0], 8, 9, 17);
  expect_tuple(bins[1], 15, 23, 41);
  expect_tuple(bins[2], 13, 16, 26);
  expect_tuple(bins[3], 3, 0, 0);
  EXPECT_EQ(bins[3].count(), 1u);

  const IndexMoments head = IndexMoments::Of(2, Slice(kReferenceArray, 2, 3));
  expect_tuple(head, 4, 0, 0);
  const IndexMoments head_and_bin = Merge(head, bins[1]);
  expect_tuple(head_and_bin, 19, 38, 102);
  const IndexMoments tail = IndexMoments::Of(2, Slice(kReferenceArray, 6, 8));
  expect_tuple(tail, 8, 6, 6);
  const IndexMoments range = Merge(head_and_bin, tail);
  expect_tuple(range, 27, 76, 284);
  EXPECT_EQ(range.count(), 6u);

  // The un-merges give the pieces back, exactly on these integers.
  expect_tuple(UnmergeRight(range, head_and_bin), 8, 6, 6);
  expect_tuple(UnmergeLeft(range, tail), 19, 38, 102);

  IndexMoments updated = bins[1];
  updated.ApplyDelta(/*offset=*/1, /*delta=*/2);
  expect_tuple(updated, 17, 25, 43);
  std::vector<double> changed = kReferenceArray;
  changed[4] += 2;
  const IndexMoments rebuilt = IndexMoments::Of(2, Slice(changed, 3, 6));
  expect_tuple(rebuilt, 17, 25, 43);
}

// ---- accumulation -------------------------------------------------------------------

TEST(MomentsIndexMomentsTest, AccumulateMatchesBruteForce) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = RandomLength(rng);
    const int order = trial % kMaxMomentTerms;
    const std::vector<double> a = RandomValues(rng, n, trial / kMaxMomentTerms);
    const IndexMoments run = IndexMoments::Of(order, a);
    ASSERT_EQ(run.count(), n);
    ASSERT_EQ(run.order(), order);
    const std::string what = "n " + std::to_string(n) + " trial " + std::to_string(trial);
    ExpectMomentsNear(run.terms(), BruteMoments(a, order), BruteMagnitudes(a, order), order, 1e-13L, what);
    for (int j = order + 1; j < kMaxMomentTerms; ++j) EXPECT_EQ(run.terms()[j], 0) << what;

    const IndexMoments magnitudes = IndexMoments::OfMagnitudes(order, a);
    ExpectMomentsNear(magnitudes.terms(), BruteMagnitudes(a, order), BruteMagnitudes(a, order), order, 1e-13L,
                      what + " magnitudes");

    // Appending in random chunks gives the same tuple.
    IndexMoments appended(order);
    for (size_t start = 0; start < n;) {
      const size_t len = std::uniform_int_distribution<size_t>(0, 700)(rng);
      const size_t end = std::min(n, start + len);
      appended.Append(Slice(a, start, end));
      start = end;
    }
    ASSERT_EQ(appended.count(), n);
    ExpectMomentsNear(appended.terms(), BruteMoments(a, order), BruteMagnitudes(a, order), order, 1e-13L,
                      what + " appended");
  }
}

// Small integers: every partial sum is an integer below 2^53, so the result is
// exact; checked against __int128.
TEST(MomentsIndexMomentsTest, AccumulateIsExactOnSmallIntegers) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = std::uniform_int_distribution<size_t>(0, 2000)(rng);
    const int order = trial % 4;
    const std::vector<double> a = RandomValues(rng, n, 3);
    const IndexMoments run = IndexMoments::Of(order, a);
    for (int j = 0; j <= order; ++j) {
      Int128 exact = 0;
      for (size_t x = 0; x < n; ++x) {
        Int128 power = 1;
        for (int k = 0; k < j; ++k) power *= static_cast<Int128>(x);
        exact += power * static_cast<Int128>(a[x]);
      }
      EXPECT_EQ(run.moment(j), static_cast<ld>(exact)) << "n " << n << " order " << j;
    }
  }
}

// Order 0 of integer data is exact up to |a_i| = 2^45.
TEST(MomentsIndexMomentsTest, IntegerSumsAreExact) {
  SEEDED_RNG(rng);
  std::uniform_int_distribution<int64_t> big(-(int64_t{1} << 45), int64_t{1} << 45);
  std::vector<double> a(100000);
  Int128 exact = 0;
  for (double& v : a) {
    const int64_t value = big(rng);
    v = static_cast<double>(value);
    exact += value;
  }
  EXPECT_EQ(Sum(IndexMoments::Of(0, a)), static_cast<ld>(exact));
  EXPECT_EQ(Sum(IndexMoments::Of(8, a)), static_cast<ld>(exact));
}

// ---- merge and un-merge -------------------------------------------------------

TEST(MomentsIndexMomentsTest, MergeOfRandomSplitsEqualsWhole) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = RandomLength(rng);
    const int order = trial % kMaxMomentTerms;
    const std::vector<double> a = RandomValues(rng, n, trial);
    // Random cut points, pieces accumulated separately and merged left to right.
    std::vector<size_t> cuts = {0, n};
    const int pieces = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int k = 0; k < pieces; ++k) cuts.push_back(std::uniform_int_distribution<size_t>(0, n)(rng));
    std::sort(cuts.begin(), cuts.end());
    IndexMoments merged(order);
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      merged = Merge(merged, IndexMoments::Of(order, Slice(a, cuts[k], cuts[k + 1])));
    }
    ASSERT_EQ(merged.count(), n);
    ExpectMomentsNear(merged.terms(), BruteMoments(a, order), BruteMagnitudes(a, order), order, 1e-13L,
                      "trial " + std::to_string(trial));
  }
}

TEST(MomentsIndexMomentsTest, UnmergeInvertsMerge) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = RandomLength(rng);
    const size_t cut = std::uniform_int_distribution<size_t>(0, n)(rng);
    const int order = trial % kMaxMomentTerms;
    const std::vector<double> a = RandomValues(rng, n, trial);
    const std::vector<double> left_values = Slice(a, 0, cut), right_values = Slice(a, cut, n);
    const IndexMoments left = IndexMoments::Of(order, left_values);
    const IndexMoments right = IndexMoments::Of(order, right_values);
    const IndexMoments total_magnitudes = IndexMoments::OfMagnitudes(order, a);
    const std::string what = "n " + std::to_string(n) + " cut " + std::to_string(cut);

    // Exact inverse of Merge up to long double rounding, scaled by the
    // magnitudes the un-merge combines: the total's, shifted by δ for the right.
    const IndexMoments total = Merge(left, right);
    const IndexMoments right_back = UnmergeRight(total, left);
    const IndexMoments left_back = UnmergeLeft(total, right);
    ASSERT_EQ(right_back.count(), n - cut);
    ASSERT_EQ(left_back.count(), cut);
    const MomentTerms shifted_scale = MagnitudesAbout(total_magnitudes, static_cast<ld>(cut));
    ExpectMomentsNear(right_back.terms(), right.terms(), shifted_scale, order, 1e-16L, what + " right");
    ExpectMomentsNear(left_back.terms(), left.terms(), total_magnitudes.terms(), order, 1e-16L, what + " left");

    // Against independently accumulated tuples ("bin total minus complement").
    const IndexMoments whole = IndexMoments::Of(order, a);
    ExpectMomentsNear(UnmergeRight(whole, left).terms(), BruteMoments(right_values, order), shifted_scale, order,
                      1e-13L, what + " right of whole");
    ExpectMomentsNear(UnmergeLeft(whole, right).terms(), BruteMoments(left_values, order), total_magnitudes.terms(),
                      order, 1e-13L, what + " left of whole");
  }
}

TEST(MomentsIndexMomentsTest, TruncatedKeepsLowOrders) {
  const IndexMoments run = IndexMoments::Of(8, kReferenceArray);
  const IndexMoments low = run.Truncated(3);
  EXPECT_EQ(low.order(), 3);
  EXPECT_EQ(low.count(), run.count());
  const IndexMoments direct = IndexMoments::Of(3, kReferenceArray);
  for (int j = 0; j < kMaxMomentTerms; ++j) EXPECT_EQ(low.terms()[j], direct.terms()[j]) << j;
}

// ---- shift to a center ----------------------------------------------------------

TEST(MomentsIndexMomentsTest, ShiftToMatchesBruteForce) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = std::uniform_int_distribution<size_t>(1, 3000)(rng);
    const int order = trial % kMaxMomentTerms;
    const std::vector<double> a = RandomValues(rng, n, trial);
    const ld w = static_cast<ld>(n);
    std::uniform_real_distribution<double> unit(0, 1);
    const ld centers[] = {
        0,                          // the start
        std::floor(unit(rng) * n),  // a cell inside
        unit(rng) * n,              // a fraction inside
        w / 2,                      // the midpoint
        w - 1,
        w,                                   // the last cell, one past it
        -1 - std::floor(unit(rng) * 3 * n),  // left of the run
        w + 0.5L + unit(rng) * 3 * n,        // right of the run
        -1e6L,
        1e6L + w,  // far away
    };
    const IndexMoments run = IndexMoments::Of(order, a);
    const IndexMoments magnitudes = IndexMoments::OfMagnitudes(order, a);
    for (const ld c : centers) {
      const std::string what = "n " + std::to_string(n) + " c " + std::to_string(double(c));
      const MomentTerms shifted = ShiftTo(run, c);
      const MomentTerms exact = BruteMoments(a, order, c);
      // The reference bound holds for spread-out data ...
      ExpectMomentsNear(shifted, exact, BruteMagnitudes(a, order, c), order, kReferenceRelativeError, what);
      // ... and the error is a few ulps of the shift's own magnitudes.
      ExpectMomentsNear(shifted, exact, MagnitudesAbout(magnitudes, c), order, 1e-13L, what + " (shift magnitudes)");
    }
  }
}

// Absolute positions near 2^40: Moment() takes p and c as absolute indices and
// never raises them to a power.
TEST(MomentsIndexMomentsTest, MomentAboutAbsoluteCenterNearTwoToTheForty) {
  SEEDED_RNG(rng);
  const std::vector<double> a = RandomValues(rng, 2000, 1);
  const uint64_t p = (uint64_t{1} << 40) - a.size();
  const IndexMoments range = IndexMoments::Of(4, a);
  for (const ld offset : {0.0L, 1000.5L, -12345.25L, 2000.0L, 777777.0L}) {
    const ld c = static_cast<ld>(p) + offset;
    Result<MomentTerms> got = Moments(range, p, 4, c);
    ASSERT_OK(got);
    // Brute force in absolute indices: i − c is exact in long double.
    MomentTerms exact{}, scale{};
    for (size_t x = 0; x < a.size(); ++x) {
      const ld d = static_cast<ld>(p + x) - c;
      ld term = a[x], mag = std::fabs(a[x]);
      for (int j = 0; j <= 4; ++j, term *= d, mag *= std::fabs(d)) {
        exact[j] += term;
        scale[j] += mag;
      }
    }
    ExpectMomentsNear(got.value(), exact, scale, 4, kReferenceRelativeError,
                      "offset " + std::to_string(double(offset)));
    Result<ld> one = Moment(range, p, 3, c);
    ASSERT_OK(one);
    EXPECT_EQ(one.value(), got.value()[3]);
  }
}

// A spike right at the center: Σ|i − c|^j |a_i| is 0 for j >= 1, so the
// reference bound cannot hold for any shifted tuple; the error stays within
// the shift's magnitudes, which ReferenceErrorBound reports.
TEST(MomentsIndexMomentsTest, ShiftOfSpikeAtCenterStaysWithinShiftMagnitudes) {
  std::vector<double> a(1000, 0.0);
  a[777] = 0.1;
  const IndexMoments run = IndexMoments::Of(8, a);
  const MomentTerms shifted = ShiftTo(run, 777);
  const MomentTerms bound = ReferenceErrorBound(IndexMoments::OfMagnitudes(8, a), 777);
  EXPECT_NEAR(static_cast<double>(shifted[0]), 0.1, 1e-17);
  for (int j = 1; j <= 8; ++j) EXPECT_LE(std::fabs(shifted[j]), bound[j]) << j;
}

TEST(MomentsIndexMomentsTest, ReferenceErrorBoundFromMagnitudes) {
  SEEDED_RNG(rng);
  const std::vector<double> a = RandomValues(rng, 3000, 0);
  const IndexMoments magnitudes = IndexMoments::OfMagnitudes(8, a);
  // Left of (or at) the start: exactly the reference bound.
  for (const ld c : {0.0L, -1.0L, -2500.5L}) {
    const MomentTerms bound = ReferenceErrorBound(magnitudes, c);
    const MomentTerms exact = BruteMagnitudes(a, 8, c);
    for (int j = 0; j <= 8; ++j) {
      EXPECT_NEAR(static_cast<double>(bound[j] / (kReferenceRelativeError * exact[j])), 1.0, 1e-12)
          << "c " << double(c) << " j " << j;
    }
  }
  // Anywhere else: an upper bound.
  for (const ld c : {1.0L, 1500.0L, 2999.0L, 4000.5L}) {
    const MomentTerms bound = ReferenceErrorBound(magnitudes, c);
    const MomentTerms exact = BruteMagnitudes(a, 8, c);
    for (int j = 0; j <= 8; ++j) {
      EXPECT_GE(bound[j] * (1 + 1e-12L), kReferenceRelativeError * exact[j]) << double(c) << " " << j;
    }
  }
}

// ---- updates ------------------------------------------------------------------

TEST(MomentsIndexMomentsTest, ApplyDeltaEqualsRecompute) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = std::uniform_int_distribution<size_t>(1, 3000)(rng);
    const int order = trial % kMaxMomentTerms;
    const bool integers = trial % 2 == 0;
    std::vector<double> a = RandomValues(rng, n, integers ? 3 : trial / 2);
    IndexMoments run = IndexMoments::Of(order, a);
    // Errors are relative to every magnitude the tuple has held: 1e9-sized
    // values replaced by small ones leave their build rounding behind.
    MomentTerms history = BruteMagnitudes(a, order);
    std::uniform_int_distribution<size_t> cell(0, n - 1);
    std::uniform_int_distribution<int> small(-1000, 1000);
    std::normal_distribution<double> normal;
    for (int k = 0; k < 50; ++k) {
      const size_t x = cell(rng);
      const double new_value = integers ? small(rng) : normal(rng) * 10;
      run.ApplyDelta(x, static_cast<ld>(new_value) - a[x]);
      ld weight = std::fabs(a[x]) + std::fabs(new_value);
      for (int j = 0; j <= order; ++j, weight *= x) history[j] += weight;
      a[x] = new_value;
    }
    const IndexMoments rebuilt = IndexMoments::Of(order, a);
    if (integers && n <= 2000 && order <= 3) {
      for (int j = 0; j <= order; ++j) EXPECT_EQ(run.moment(j), rebuilt.moment(j)) << j;
    }
    ExpectMomentsNear(run.terms(), BruteMoments(a, order), history, order, 1e-13L, "trial " + std::to_string(trial));
  }
}

TEST(MomentsIndexMomentsTest, StoreLoadRoundTrip) {
  SEEDED_RNG(rng);
  const std::vector<double> a = RandomValues(rng, 4321, 0);
  const IndexMoments run = IndexMoments::Of(8, a);
  std::vector<double> values(9), residues(9);
  run.Store(values, residues);
  const IndexMoments lossless = IndexMoments::Load(8, run.count(), values, residues);
  EXPECT_EQ(lossless.count(), run.count());
  for (int j = 0; j <= 8; ++j) EXPECT_EQ(lossless.moment(j), run.moment(j)) << j;
  run.Store(values);
  const IndexMoments rounded = IndexMoments::Load(8, run.count(), values);
  for (int j = 0; j <= 8; ++j) {
    EXPECT_EQ(rounded.moment(j), static_cast<ld>(static_cast<double>(run.moment(j)))) << j;
  }
}

// 10^6 random updates on one tuple (J = 8, 1000 cells), kept three ways: in
// memory (long double), stored with residues (lossless: identical), stored as
// plain doubles (rounded at every update). Every moment about several centers
// must stay within 1e-9 · Σ|i − c|^j |a_i| of the exact value. Plain doubles
// are held to it only about the start and left of the run: a shift to a center
// inside multiplies their drift (~1e3 · 2^-53 of M_j, rms) by up to ~3^(J+1)/2;
// measured, positive data: 3e-10 of Σ|i − c|^j |a_i| at the midpoint, too close
// to 1e-9 to assert for every seed. The worst ratios are printed.
TEST(MomentsIndexMomentsTest, DriftAfterAMillionUpdates) {
  SEEDED_RNG(rng);
  constexpr int kOrder = 8;
  constexpr size_t kCells = 1000;
  constexpr int kUpdates = 1000000;
  for (const int shape : {0, 1}) {  // signed noise; positive values (the harder case)
    SCOPED_TRACE(shape == 0 ? "signed values" : "positive values");
    std::vector<double> a = RandomValues(rng, kCells, shape);
    IndexMoments in_memory = IndexMoments::Of(kOrder, a);
    std::vector<double> split_values(kOrder + 1), split_residues(kOrder + 1), plain(kOrder + 1);
    in_memory.Store(split_values, split_residues);
    in_memory.Store(plain);
    std::uniform_int_distribution<size_t> cell(0, kCells - 1);
    for (int k = 0; k < kUpdates; ++k) {
      const size_t x = cell(rng);
      const double new_value = RandomValues(rng, 1, shape)[0];
      const ld delta = static_cast<ld>(new_value) - a[x];
      a[x] = new_value;
      in_memory.ApplyDelta(x, delta);
      IndexMoments split = IndexMoments::Load(kOrder, kCells, split_values, split_residues);
      split.ApplyDelta(x, delta);
      split.Store(split_values, split_residues);
      IndexMoments rounded = IndexMoments::Load(kOrder, kCells, plain);
      rounded.ApplyDelta(x, delta);
      rounded.Store(plain);
    }
    const IndexMoments split = IndexMoments::Load(kOrder, kCells, split_values, split_residues);
    const IndexMoments rounded = IndexMoments::Load(kOrder, kCells, plain);
    for (int j = 0; j <= kOrder; ++j) EXPECT_EQ(split.moment(j), in_memory.moment(j)) << j;

    const ld w = kCells;
    for (const ld c : {0.0L, -100.0L, w / 2, w / 3 + 0.5L, w - 1, w + 17.5L}) {
      const MomentTerms exact = BruteMoments(a, kOrder, c);
      const MomentTerms bound = BruteMagnitudes(a, kOrder, c);
      const std::string what = "c " + std::to_string(double(c));
      const MomentTerms from_memory = ShiftTo(in_memory, c), from_plain = ShiftTo(rounded, c);
      ExpectMomentsNear(from_memory, exact, bound, kOrder, kReferenceRelativeError, what + " long double");
      if (c <= 0) {
        ExpectMomentsNear(from_plain, exact, bound, kOrder, kReferenceRelativeError, what + " plain doubles");
      }
      ld worst_in_memory = 0, worst_plain = 0;
      for (int j = 0; j <= kOrder; ++j) {
        worst_in_memory = std::max(worst_in_memory, std::fabs(from_memory[j] - exact[j]) / bound[j]);
        worst_plain = std::max(worst_plain, std::fabs(from_plain[j] - exact[j]) / bound[j]);
      }
      std::printf(
          "[ drift    ] %s c %7.1f  worst |error| / Σ|i-c|^j|a_i|: long double %.2Le, "
          "plain doubles %.2Le\n",
          shape == 0 ? "signed  " : "positive", static_cast<double>(c), worst_in_memory, worst_plain);
    }
  }
}

// ---- value moments: mean and variance ------------------------------------------

struct ExactValueStats {
  ld mean = 0;
  ld central = 0;  // Σ (a − mean)²
};

// Two passes in long double.
ExactValueStats BruteValueStats(const std::vector<double>& a) {
  ExactValueStats s;
  if (a.empty()) return s;
  for (double v : a) s.mean += v;
  s.mean /= a.size();
  for (double v : a) s.central += (v - s.mean) * (v - s.mean);
  return s;
}

void ExpectValueStats(const ValueMoments& got, const std::vector<double>& a, ld relative, const std::string& what) {
  ASSERT_EQ(got.count(), a.size()) << what;
  const ExactValueStats exact = BruteValueStats(a);
  Result<ld> mean = Mean(got);
  Result<ld> var = Variance(got);
  ASSERT_OK(mean) << what;
  ASSERT_OK(var) << what;
  const ld exact_var = exact.central / a.size();
  // The mean is K + S1/n with the shift K a double: within a few ulps of
  // the values' magnitude, not of the mean's (which may be near 0).
  ld largest = 0;
  for (double v : a) largest = std::max<ld>(largest, std::fabs(v));
  EXPECT_LE(std::fabs(mean.value() - exact.mean), 1e-15L * std::max(std::fabs(exact.mean), largest) + 1e-15L) << what;
  EXPECT_LE(std::fabs(var.value() - exact_var), relative * exact_var)
      << what << ": var " << double(var.value()) << ", want " << double(exact_var);
}

TEST(MomentsValueMomentsTest, MatchesBruteForce) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = std::max<size_t>(1, RandomLength(rng));
    const std::vector<double> a = RandomValues(rng, n, trial);
    ExpectValueStats(ValueMoments::Of(a), a, 1e-12L, "trial " + std::to_string(trial));
  }
}

// Values 1e9 + N(0,1): the variance to 1e-6 relative (we hold it to 1e-9),
// straight, after merging random pieces, after un-merging pieces, stored.
TEST(MomentsValueMomentsTest, VarianceSurvivesLargeMean) {
  SEEDED_RNG(rng);
  const std::vector<double> a = RandomValues(rng, 100000, 2);
  const ValueMoments whole = ValueMoments::Of(a);
  ExpectValueStats(whole, a, 1e-9L, "whole");

  std::vector<size_t> cuts = {0, a.size()};
  for (int k = 0; k < 40; ++k) {
    cuts.push_back(std::uniform_int_distribution<size_t>(0, a.size())(rng));
  }
  std::sort(cuts.begin(), cuts.end());
  ValueMoments merged;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    merged = Merge(merged, ValueMoments::Of(Slice(a, cuts[k], cuts[k + 1])));
  }
  ExpectValueStats(merged, a, 1e-9L, "merged");

  for (int k = 0; k < 50; ++k) {
    const size_t lo = std::uniform_int_distribution<size_t>(0, a.size() - 1)(rng);
    const size_t hi = std::uniform_int_distribution<size_t>(lo, a.size())(rng);
    std::vector<double> rest = Slice(a, 0, lo);
    const std::vector<double> tail = Slice(a, hi, a.size());
    rest.insert(rest.end(), tail.begin(), tail.end());
    if (rest.empty()) continue;
    const ValueMoments remainder = Unmerge(whole, ValueMoments::Of(Slice(a, lo, hi)));
    ExpectValueStats(remainder, rest, 1e-9L, "unmerge [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  }

  std::vector<double> stored(3);
  whole.Store(stored);
  ExpectValueStats(ValueMoments::Load(whole.count(), stored), a, 1e-9L, "stored");

  Result<ld> sample = Variance(whole, 1);
  ASSERT_OK(sample);
  const ExactValueStats exact = BruteValueStats(a);
  EXPECT_NEAR(static_cast<double>(sample.value() / (exact.central / (a.size() - 1))), 1.0, 1e-9);
  Result<ld> sd = StdDev(whole, 1);
  ASSERT_OK(sd);
  EXPECT_NEAR(static_cast<double>(sd.value()), std::sqrt(static_cast<double>(sample.value())), 1e-12);
}

// Pieces with very different means (a trend): merges re-center, so nothing
// cancels beyond the data's own spread.
TEST(MomentsValueMomentsTest, MergeAcrossATrend) {
  SEEDED_RNG(rng);
  std::normal_distribution<double> normal;
  std::vector<double> a(20000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 1e9 + 1e3 * static_cast<double>(i) + normal(rng);
  ValueMoments merged;
  for (size_t start = 0; start < a.size(); start += 1000) {
    merged = Merge(merged, ValueMoments::Of(Slice(a, start, start + 1000)));
  }
  ExpectValueStats(merged, a, 1e-12L, "trend");
  ExpectValueStats(Unmerge(merged, ValueMoments::Of(Slice(a, 0, 19000))), Slice(a, 19000, 20000), 1e-6L,
                   "last piece of a trend");
}

// 10^6 updates replacing a_i by a_i' on a stored (3 doubles) tuple of
// 1e9 + N(0,1) data: the variance stays within 1e-6 (we hold it to 1e-9),
// also when the updates drag the mean far from the build-time shift.
TEST(MomentsValueMomentsTest, UpdatesKeepVarianceAccurate) {
  SEEDED_RNG(rng);
  std::normal_distribution<double> normal;
  std::vector<double> a = RandomValues(rng, 5000, 2);
  std::vector<double> stored(3);
  ValueMoments::Of(a).Store(stored);
  std::uniform_int_distribution<size_t> cell(0, a.size() - 1);
  for (int k = 0; k < 1000000; ++k) {
    const size_t x = cell(rng);
    // The second half of the updates moves the level from 1e9 to 1e9 + 50.
    const double level = k < 500000 ? 1e9 : 1e9 + 50;
    const double new_value = level + normal(rng);
    ValueMoments values = ValueMoments::Load(a.size(), stored);
    values.ApplyUpdate(a[x], new_value);
    values.Store(stored);
    a[x] = new_value;
  }
  ExpectValueStats(ValueMoments::Load(a.size(), stored), a, 1e-9L, "after 10^6 updates");
}

TEST(MomentsValueMomentsTest, EmptyAndSingle) {
  const ValueMoments empty = ValueMoments::Of({});
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(Mean(empty).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Variance(empty).status().ToString(), "Invalid argument: var: the range is empty");
  EXPECT_EQ(StdDev(empty).status().ToString(), "Invalid argument: std: the range is empty");

  const std::vector<double> one = {1e9 + 0.25};
  const ValueMoments single = ValueMoments::Of(one);
  EXPECT_EQ(Mean(single).value(), 1e9L + 0.25L);
  EXPECT_EQ(Variance(single).value(), 0);
  EXPECT_EQ(StdDev(single).value(), 0);
  EXPECT_EQ(Variance(single, 1).status().ToString(),
            "Invalid argument: var: ddof 1 needs more than 1 cells, the range has 1");
  EXPECT_FALSE(Variance(single, -1).ok());

  // Merge with an empty run is the identity; un-merging everything is empty.
  EXPECT_EQ(Mean(Merge(empty, single)).value(), Mean(single).value());
  EXPECT_EQ(Mean(Merge(single, empty)).value(), Mean(single).value());
  EXPECT_EQ(Unmerge(single, single).count(), 0u);
  EXPECT_EQ(Unmerge(single, empty).count(), 1u);
}

// ---- extremes -----------------------------------------------------------------

TEST(MomentsExtremesTest, MatchBruteForceAndMerge) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = std::max<size_t>(1, RandomLength(rng));
    std::vector<double> a = RandomValues(rng, n, trial);
    if (trial % 3 == 0) a[std::uniform_int_distribution<size_t>(0, n - 1)(rng)] = NAN;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (double v : a) {
      if (std::isnan(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const size_t cut = std::uniform_int_distribution<size_t>(0, n)(rng);
    const Extremes merged = Merge(Extremes::Of(Slice(a, 0, cut)), Extremes::Of(Slice(a, cut, n)));
    for (const Extremes& e : {Extremes::Of(a), merged}) {
      if (lo > hi) {  // all NaN
        EXPECT_TRUE(e.empty());
        continue;
      }
      EXPECT_EQ(Min(e).value(), lo);
      EXPECT_EQ(Max(e).value(), hi);
    }
  }
}

TEST(MomentsExtremesTest, EmptySingleAndNaN) {
  EXPECT_TRUE(Extremes::Of({}).empty());
  EXPECT_EQ(Min(Extremes::Of({})).status().ToString(), "Invalid argument: min: the range is empty or all NaN");
  EXPECT_FALSE(Max(Extremes::Of({})).ok());
  const std::vector<double> nans = {NAN, NAN, NAN};
  EXPECT_TRUE(Extremes::Of(nans).empty());
  const std::vector<double> one = {-2.5};
  EXPECT_EQ(Min(Extremes::Of(one)).value(), -2.5);
  EXPECT_EQ(Max(Extremes::Of(one)).value(), -2.5);
  const std::vector<double> with_nan = {NAN, 3, NAN, -1, NAN};
  EXPECT_EQ(Min(Extremes::Of(with_nan)).value(), -1);
  EXPECT_EQ(Max(Extremes::Of(with_nan)).value(), 3);
}

// ---- center of mass, spread ---------------------------------------------------

TEST(MomentsDerivedStatsTest, CenterOfMassAndSpread) {
  SEEDED_RNG(rng);
  for (int trial = 0; trial < 100; ++trial) {
    const size_t n = std::uniform_int_distribution<size_t>(1, 5000)(rng);
    const std::vector<double> a = RandomValues(rng, n, 1);  // positive weights
    const uint64_t p = trial % 2 ? (uint64_t{1} << 40) - n : 17;
    const IndexMoments range = IndexMoments::Of(2, a);
    ld m0 = 0, m1 = 0;
    for (size_t x = 0; x < n; ++x) {
      m0 += a[x];
      m1 += static_cast<ld>(x) * a[x];
    }
    const ld g = m1 / m0;
    ld second = 0;
    for (size_t x = 0; x < n; ++x) second += (static_cast<ld>(x) - g) * (static_cast<ld>(x) - g) * a[x];
    Result<ld> com = CenterOfMass(range, p);
    Result<ld> spread = Spread(range);
    ASSERT_OK(com);
    ASSERT_OK(spread);
    // An absolute index near 2^40 resolves to 2^-23 in long double.
    const ld exact_com = static_cast<ld>(p) + g;
    EXPECT_LE(std::fabs(com.value() - exact_com), 4 * std::numeric_limits<ld>::epsilon() * exact_com + 1e-13L * n);
    EXPECT_LE(std::fabs(spread.value() - std::sqrt(second / m0)), 1e-9L * std::sqrt(second / m0)) << "n " << n;
  }
  // buffers/REFERENCE.md §1.1's range: com = 2 + 76/27.
  const IndexMoments range = IndexMoments::Of(2, Slice(kReferenceArray, 2, 8));
  EXPECT_EQ(CenterOfMass(range, 2).value(), 2 + 76.0L / 27.0L);
}

TEST(MomentsDerivedStatsTest, CenterOfMassAndSpreadErrors) {
  const IndexMoments empty(2);
  EXPECT_EQ(CenterOfMass(empty, 0).status().ToString(), "Invalid argument: com: the range is empty");
  EXPECT_EQ(Spread(empty).status().ToString(), "Invalid argument: spread: the range is empty");
  const std::vector<double> cancelling = {1, -1};
  EXPECT_EQ(CenterOfMass(IndexMoments::Of(2, cancelling), 0).status().ToString(),
            "Invalid argument: com: the values sum to 0");
  EXPECT_EQ(CenterOfMass(IndexMoments::Of(0, kReferenceArray), 0).status().ToString(),
            "Invalid argument: com: needs index moments of order 1, the stored order is 0");
  EXPECT_FALSE(Spread(IndexMoments::Of(1, kReferenceArray)).ok());
  const std::vector<double> mixed = {-1, 3, -1};  // Σ (x − com)² a_x < 0
  EXPECT_EQ(Spread(IndexMoments::Of(2, mixed)).status().code(), Status::Code::kInvalidArgument);
  const std::vector<double> negative = {-1, -2, -3};  // all negative weights are fine
  EXPECT_OK(Spread(IndexMoments::Of(2, negative)));
}

// ---- empty and single-element ranges --------------------------------------------

TEST(MomentsDerivedStatsTest, EmptyRange) {
  const IndexMoments empty = IndexMoments::Of(4, {});
  EXPECT_EQ(empty.count(), 0u);
  EXPECT_EQ(Sum(empty), 0);
  Result<MomentTerms> moments = Moments(empty, 5, 4, 7.5L);
  ASSERT_OK(moments);
  for (ld m : moments.value()) EXPECT_EQ(m, 0);
  EXPECT_EQ(PolyFit(empty, 0).status().ToString(), "Invalid argument: polyfit: the range is empty");
  // The empty run is the identity of Merge, on both sides.
  const IndexMoments run = IndexMoments::Of(4, kReferenceArray);
  for (const IndexMoments& m : {Merge(empty, run), Merge(run, empty)}) {
    EXPECT_EQ(m.count(), run.count());
    for (int j = 0; j <= 4; ++j) EXPECT_EQ(m.moment(j), run.moment(j));
  }
  EXPECT_EQ(UnmergeRight(run, run).count(), 0u);
  EXPECT_EQ(UnmergeLeft(run, run).count(), 0u);
}

TEST(MomentsDerivedStatsTest, SingleElementRange) {
  const std::vector<double> one = {2.5};
  const IndexMoments range = IndexMoments::Of(3, one);
  EXPECT_EQ(range.moment(0), 2.5);
  EXPECT_EQ(range.moment(1), 0);
  EXPECT_EQ(Sum(range), 2.5);
  EXPECT_EQ(CenterOfMass(range, 41).value(), 41);
  EXPECT_EQ(Spread(range).value(), 0);
  EXPECT_EQ(Moment(range, 41, 3, 43).value(), -8 * 2.5);
  EXPECT_EQ(PolyFit(range, 0).value()[0], 2.5);
  EXPECT_EQ(PolyFit(range, 1).status().ToString(),
            "Invalid argument: polyfit: a degree-1 fit needs at least 2 cells, the range has 1");
}

TEST(MomentsDerivedStatsTest, OrderAndDegreeErrors) {
  const IndexMoments range = IndexMoments::Of(2, kReferenceArray);
  EXPECT_EQ(PolyFit(range, 5).status().ToString(), "Invalid argument: polyfit: degree 5 exceeds the stored order 2");
  EXPECT_EQ(Moment(range, 0, 3, 0).status().ToString(), "Invalid argument: moment: order 3 exceeds the stored order 2");
  EXPECT_FALSE(Moment(range, 0, -1, 0).ok());
  EXPECT_FALSE(PolyFit(range, -1).ok());
}

// ---- power sums and polynomial fits -------------------------------------------

TEST(MomentsPowerSumsTest, ScaledPowerSumMatchesDirectSum) {
  for (uint64_t w : {1, 2, 3, 5, 31, 32, 33, 34, 64, 100, 257, 1000, 4999}) {
    for (int m = 0; m <= kMaxPowerSumExponent; ++m) {
      ld direct = 0;
      for (uint64_t x = 0; x < w; ++x) direct += std::pow(static_cast<ld>(x) / w, m);
      EXPECT_LE(std::fabs(ScaledPowerSum(w, m) - direct), 1e-16L * direct + 1e-30L) << "w " << w << " m " << m;
    }
  }
}

// Huge w: exact integer closed forms for m <= 2 in __int128.
TEST(MomentsPowerSumsTest, ScaledPowerSumForHugeRanges) {
  for (uint64_t w : {uint64_t{1} << 20, (uint64_t{1} << 40) - 3, uint64_t{1} << 40}) {
    const Int128 W = w;
    const ld wl = w;
    EXPECT_EQ(ScaledPowerSum(w, 0), wl);
    const ld s1 = static_cast<ld>(W * (W - 1) / 2) / wl;
    const ld s2 = static_cast<ld>((W - 1) * W * (2 * W - 1) / 6) / (wl * wl);
    EXPECT_NEAR(static_cast<double>(ScaledPowerSum(w, 1) / s1), 1.0, 1e-18);
    EXPECT_NEAR(static_cast<double>(ScaledPowerSum(w, 2) / s2), 1.0, 1e-18);
    // Σ (x/w)^16 = w/17 − 1/2 + 4/(3w) − O(w^-3): no overflow at w^17 = 2^680.
    EXPECT_NEAR(static_cast<double>(ScaledPowerSum(w, 16) / (wl / 17 - 0.5L + 4 / (3 * wl))), 1.0, 1e-18);
  }
}

// Integer polynomial data (exact in double) of degree 0..4: the fit gives the
// coefficients back. Compared in the scaled variable t = x / w, where the
// coefficients are of comparable size; the moments carry ~2^-53 relative
// error from accumulation, times the condition number (5e5 at degree 4).
TEST(MomentsPolyFitTest, RecoversExactPolynomials) {
  SEEDED_RNG(rng);
  std::uniform_int_distribution<int> coefficient(-5, 5);
  for (int degree = 0; degree <= 4; ++degree) {
    for (uint64_t w :
         {uint64_t(degree + 1), uint64_t(degree + 2), uint64_t{10}, uint64_t{100}, uint64_t{1000}, uint64_t{3000}}) {
      std::vector<ld> truth(degree + 1);
      for (ld& c : truth) c = coefficient(rng);
      std::vector<double> a(w);
      for (uint64_t x = 0; x < w; ++x) {
        ld v = 0;
        for (int m = degree; m >= 0; --m) v = v * x + truth[m];
        a[x] = static_cast<double>(v);
      }
      const IndexMoments range = IndexMoments::Of(4, a);
      Result<MomentTerms> fit = PolyFit(range, degree);
      ASSERT_OK(fit);
      ld scale = 0;
      for (int m = 0; m <= degree; ++m) scale = std::max(scale, std::fabs(truth[m]) * std::pow(ld(w), m));
      for (int m = 0; m <= degree; ++m) {
        EXPECT_LE(std::fabs(fit.value()[m] - truth[m]) * std::pow(ld(w), m), 1e-10L * scale + 1e-15L)
            << "degree " << degree << " w " << w << " m " << m;
      }
      for (int m = degree + 1; m < kMaxMomentTerms; ++m) EXPECT_EQ(fit.value()[m], 0);
    }
  }
}

// A range of 2^40 cells, too long to materialize: its moments come from the
// closed forms (b_m = Σ_k c_k Σ_x x^(m+k)); the fit must undo them.
TEST(MomentsPolyFitTest, HugeRangeFromClosedFormMoments) {
  const uint64_t w = uint64_t{1} << 40;
  const ld wl = w;
  const ld scaled_truth[] = {3, -2, 0.5L, 1.25L, -4};  // coefficients of t^m, t = x / w
  for (int degree = 0; degree <= 4; ++degree) {
    std::vector<double> moments(degree + 1);
    for (int m = 0; m <= degree; ++m) {
      ld b = 0;  // Σ_x t^m a_x with a_x = Σ_k c'_k t^k, then times w^m
      for (int k = 0; k <= degree; ++k) b += scaled_truth[k] * ScaledPowerSum(w, m + k);
      moments[m] = static_cast<double>(b * std::pow(wl, m));
    }
    const IndexMoments range = IndexMoments::Load(degree, w, moments);
    Result<MomentTerms> fit = PolyFit(range, degree);
    ASSERT_OK(fit);
    for (int m = 0; m <= degree; ++m) {
      EXPECT_NEAR(static_cast<double>(fit.value()[m] * std::pow(wl, m)), static_cast<double>(scaled_truth[m]), 1e-9)
          << "degree " << degree << " m " << m;
    }
  }
}

// Least squares by Householder QR on the design matrix V_{x,m} = (x / w)^m in
// long double (condition sqrt(cond(A)), a better reference than any normal
// equations). Returns the coefficients of t^m.
std::vector<ld> BruteLeastSquares(const std::vector<double>& a, int degree) {
  const size_t w = a.size();
  const int n = degree + 1;
  std::vector<std::vector<ld>> v(w, std::vector<ld>(n));
  std::vector<ld> y(a.begin(), a.end());
  for (size_t x = 0; x < w; ++x) {
    for (int m = 0; m < n; ++m) v[x][m] = std::pow(static_cast<ld>(x) / w, m);
  }
  for (int k = 0; k < n; ++k) {
    ld norm = 0;
    for (size_t i = k; i < w; ++i) norm += v[i][k] * v[i][k];
    norm = std::sqrt(norm);
    const ld alpha = v[k][k] > 0 ? -norm : norm;
    std::vector<ld> u(w, 0);
    for (size_t i = k; i < w; ++i) u[i] = v[i][k];
    u[k] -= alpha;
    ld uu = 0;
    for (size_t i = k; i < w; ++i) uu += u[i] * u[i];
    if (uu == 0) continue;
    for (int j = k; j < n; ++j) {
      ld dot = 0;
      for (size_t i = k; i < w; ++i) dot += u[i] * v[i][j];
      for (size_t i = k; i < w; ++i) v[i][j] -= 2 * dot / uu * u[i];
    }
    ld dot = 0;
    for (size_t i = k; i < w; ++i) dot += u[i] * y[i];
    for (size_t i = k; i < w; ++i) y[i] -= 2 * dot / uu * u[i];
  }
  std::vector<ld> c(n);
  for (int i = n - 1; i >= 0; --i) {
    ld s = y[i];
    for (int j = i + 1; j < n; ++j) s -= v[i][j] * c[j];
    c[i] = s / v[i][i];
  }
  return c;
}

TEST(MomentsPolyFitTest, MatchesLeastSquaresOnNoisyData) {
  SEEDED_RNG(rng);
  std::normal_distribution<double> normal;
  for (int degree = 0; degree <= 8; ++degree) {
    for (size_t w : {size_t(degree + 1), size_t(degree + 3), size_t{50}, size_t{777}, size_t{4000}}) {
      std::vector<double> a(w);
      for (size_t x = 0; x < w; ++x) {
        const double t = static_cast<double>(x) / w;
        a[x] = 10 * std::sin(6 * t) + normal(rng);
      }
      const IndexMoments range = IndexMoments::Of(8, a);
      Result<MomentTerms> fit = PolyFit(range, degree);
      ASSERT_OK(fit);
      const std::vector<ld> reference = BruteLeastSquares(a, degree);
      ld scale = 0;
      for (ld c : reference) scale = std::max(scale, std::fabs(c));
      // The normal equations' condition number: Hilbert of order degree + 1.
      const ld tolerance = degree <= 4 ? 1e-10L : degree <= 6 ? 1e-8L : 1e-5L;
      for (int m = 0; m <= degree; ++m) {
        EXPECT_LE(std::fabs(fit.value()[m] * std::pow(static_cast<ld>(w), m) - reference[m]), tolerance * scale)
            << "degree " << degree << " w " << w << " m " << m;
      }
    }
  }
}

}  // namespace
}  // namespace momenta
