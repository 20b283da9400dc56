// Int192 and ExactChange (buffers/algebra/exact_squares.h): sums of squares
// of 64-bit cells exact past 128 bits, against decimal references computed
// with Python's integers (noted beside each), and random sums and differences
// (seed printed) against a reference that adds in 128-bit halves.
#include "buffers/algebra/exact_squares.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>

#include "buffers/algebra/statistics.h"  // Int128ToString
#include "tests/test_util.h"

namespace momenta {
namespace {

// The value as (high 64 bits, low 128 bits).
std::pair<uint64_t, UInt128> Parts(const Int192& v) {
  uint64_t limbs[3];
  v.Store(limbs);
  return {limbs[2], (static_cast<UInt128>(limbs[1]) << 64) | limbs[0]};
}

TEST(ExactSquaresTest, SquaresOfTheExtremes) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr uint64_t kMaxU = std::numeric_limits<uint64_t>::max();
  // (-2**63)**2 == 2**126
  EXPECT_EQ(Int128ToString(*Int192::Square(kMin).ToInt128()), "85070591730234615865843651857942052864");
  // (2**64 - 1)**2 == 340282366920938463426481119284349108225 > 2**127: past Int128
  const Int192 big = Int192::Square(kMaxU);
  EXPECT_FALSE(big.ToInt128().has_value());
  EXPECT_EQ(Parts(big).first, 0u);
  EXPECT_EQ(Parts(big).second, static_cast<UInt128>(kMaxU) * kMaxU);
  // 3 * (2**64 - 1)**2 == 2 * 2**128 + 340282366920938463352694142989510901763
  const Int192 three = big + big + big;
  EXPECT_EQ(Parts(three).first, 2u);
  EXPECT_EQ(Int128ToString(static_cast<Int128>(Parts(three).second - (static_cast<UInt128>(1) << 127))),
            "170141183460469231621006839273626796035");  // the low part minus 2**127, to print it signed
  EXPECT_EQ(three.ToLongDouble(), 3.0L * static_cast<long double>(kMaxU) * static_cast<long double>(kMaxU));
  // Back down: exact again.
  EXPECT_TRUE(three - big - big == big);
  EXPECT_TRUE((three - three).is_zero());
}

TEST(ExactSquaresTest, NegativeValuesAndInt128Range) {
  const Int192 minus_one = Int192::Of(-1);
  EXPECT_TRUE(minus_one.negative());
  EXPECT_EQ(*minus_one.ToInt128(), -1);
  EXPECT_EQ(minus_one.ToLongDouble(), -1.0L);
  const Int128 lowest = -(static_cast<Int128>(1) << 126) * 2;  // -2**127
  EXPECT_EQ(Int128ToString(*Int192::Of(lowest).ToInt128()), "-170141183460469231731687303715884105728");
  EXPECT_FALSE((Int192::Of(lowest) - Int192::Of(1)).ToInt128().has_value());
  EXPECT_TRUE(-Int192::Of(5) == Int192::Of(-5));
  const ExactChange c = ExactChangeOf(-3, 4);  // 4 - (-3), 16 - 9
  EXPECT_EQ(Int128ToString(c.sum), "7");
  EXPECT_TRUE(c.squares == Int192::Of(7));
  EXPECT_TRUE(ExactChange{}.is_zero());
}

// Random sums of squares of 64-bit values and their removal, against a
// reference that keeps (carry count, low 128 bits) by hand.
TEST(ExactSquaresTest, RandomSumsAndDifferences) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  Int192 total;
  uint64_t high = 0;
  UInt128 low = 0;
  std::vector<uint64_t> added;
  for (int k = 0; k < 10000; ++k) {
    const uint64_t v = rng() % 4 == 0 ? std::numeric_limits<uint64_t>::max() - rng() % 4 : rng();
    const UInt128 sq = static_cast<UInt128>(v) * v;
    high += low + sq < low ? 1 : 0;
    low += sq;
    total += Int192::Square(v);
    added.push_back(v);
    ASSERT_EQ(Parts(total).first, high);
    ASSERT_EQ(Parts(total).second, low);
  }
  for (uint64_t v : added) total -= Int192::Square(v);
  EXPECT_TRUE(total.is_zero());
}

}  // namespace
}  // namespace momenta
