// stream/protocol/count_grid.h: the grid is strictly increasing, above L each
// step is within a factor (1 + h/2), and LevelAtOrBelow / LevelAtOrAbove
// bracket random counts. Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "stream/protocol/count_grid.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(CountGridTest, IncreasingWithBoundedSteps) {
  for (double h : {0.3, 0.01, 1.0 / 7200}) {
    CountGrid g(h);
    for (uint64_t i = 0; i < g.L() + 200000; i += (i < g.L() + 1000 ? 1 : 97)) {
      if (g.Value(i + 1) > (uint64_t{1} << 60)) break;  // counts beyond any window
      ASSERT_LT(g.Value(i), g.Value(i + 1)) << "h=" << h << " i=" << i;
      if (i >= g.L()) {
        ASSERT_LE(static_cast<double>(g.Value(i + 1)), (1 + h / 2) * static_cast<double>(g.Value(i)));
      }
    }
    std::mt19937_64 rng(testing::TestSeed());
    for (int k = 0; k < 2000; ++k) {
      const double x = std::exp(std::uniform_real_distribution<double>(0, 30)(rng)) - 1;
      const uint64_t below = g.LevelAtOrBelow(x), above = g.LevelAtOrAbove(x);
      ASSERT_LE(static_cast<double>(g.Value(below)), x);
      ASSERT_GT(static_cast<double>(g.Value(below + 1)), x);
      ASSERT_GE(static_cast<double>(g.Value(above)), x);
      if (above > 0) {
        ASSERT_LT(static_cast<double>(g.Value(above - 1)), x);
      }
    }
  }
}

}  // namespace
}  // namespace momenta
