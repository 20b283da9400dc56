// stream/protocol/basic_count_rule.h on its own: each Observe against the
// rule as the header writes it (up to max{i : g(i) <= x} when x > (1+h) r,
// down to min{i : g(i) >= x} when x < r/(1+h), else nothing), the level deltas
// summing to the level, |r - x| <= h x between events and <= (h/2) x right
// after one, r = 0 exactly when x = 0, and |r - c| <= eps_b c whenever x is
// within eps_b/3 of the true count c; then over every generated workload with
// a WindowCount at synopsis_eps(), and a hovering count costing nothing.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "stream/protocol/basic_count_rule.h"
#include "stream/window/window_count.h"
#include "tests/assert_ok.h"
#include "tests/stream/protocol/rule_workload.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

// One Observe checked against the header's rule and bounds; `root` is the
// level the root holds (the sum of the deltas). Returns false on a failure.
bool ObserveChecked(BasicCountSite& site, uint64_t* root, double x, const std::string& where) {
  const CountGrid& g = site.grid();
  const double h = g.h(), r = site.reported();
  const uint64_t before = site.level();
  uint64_t want = before;
  if (x > (1 + h) * r) {
    want = g.LevelAtOrBelow(x);
  } else if (x < r / (1 + h)) {
    want = g.LevelAtOrAbove(x);
  }
  const int64_t delta = site.Observe(x);
  EXPECT_EQ(delta, static_cast<int64_t>(want) - static_cast<int64_t>(before)) << where << " x=" << x << " r=" << r;
  EXPECT_EQ(site.level(), want) << where;
  *root = static_cast<uint64_t>(static_cast<int64_t>(*root) + delta);
  EXPECT_EQ(*root, site.level()) << where << ": the deltas do not sum to the level";
  const double now = site.reported();
  EXPECT_EQ(now, static_cast<double>(g.Value(site.level()))) << where;
  EXPECT_LE(std::abs(now - x), h * x + 1e-9 * x) << where << " x=" << x << " r=" << now;
  if (delta != 0) {
    EXPECT_LE(std::abs(now - x), h / 2 * x + 1e-9 * x) << where << " right after an event, x=" << x;
  }
  EXPECT_EQ(now == 0, x == 0) << where << " x=" << x << " r=" << now;
  return !::testing::Test::HasFailure();
}

TEST(BasicCountRuleTest, FollowsTheRuleAndKeepsItsBounds) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (double eps_b : {0.5, 0.1, 0.03}) {
    SCOPED_TRACE("eps_b=" + std::to_string(eps_b) + " seed=" + std::to_string(seed));
    BasicCountSite site(eps_b);
    EXPECT_EQ(site.synopsis_eps(), eps_b / 3);
    EXPECT_EQ(site.grid().h(), eps_b / 3);
    const double L = static_cast<double>(site.grid().L());
    uint64_t root = 0;
    double c = 0;  // the true count: a random walk with jumps, to 0 and far up
    for (int step = 0; step < 20000; ++step) {
      const unsigned r = static_cast<unsigned>(rng() % 1000);
      if (r < 5) {
        c = 0;
      } else if (r < 10) {
        c = std::floor(std::exp(std::uniform_real_distribution<double>(0, 28)(rng)));
      } else {
        const double s = r < 500 ? 0.002 : r < 950 ? 0.05 : 0.5;
        c = std::max(0.0, std::round(c * (1 + std::normal_distribution<double>(0, s)(rng)) +
                                     static_cast<double>(rng() % 3) - 1));
      }
      // x within eps_b/3 of c: whole below L (where a count synopsis is
      // exact), in halves above (as CountEstimate gives them).
      const double room = eps_b / 3 * c, u = std::uniform_real_distribution<double>(-1, 1)(rng);
      const double x = c < L ? c + std::round(u * std::floor(room)) : c + std::trunc(u * 2 * room) / 2;
      ASSERT_LE(std::abs(x - c), room + 1e-9);
      ASSERT_TRUE(ObserveChecked(site, &root, x, "step " + std::to_string(step)));
      ASSERT_LE(std::abs(site.reported() - c), eps_b * c + 1e-9) << "step " << step << " c=" << c << " x=" << x;
    }
  }
}

// A count wandering inside the hysteresis band of its report sends nothing
// after the first event, however many ticks it wanders.
TEST(BasicCountRuleTest, HoveringInsideTheBandSendsNothing) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  BasicCountSite site(0.1);
  ASSERT_NE(site.Observe(100000), 0);
  const double r = site.reported(), h = site.grid().h();
  for (int i = 0; i < 10000; ++i) {
    const double x = std::uniform_real_distribution<double>(r / (1 + h), (1 + h) * r)(rng);
    ASSERT_EQ(site.Observe(x), 0) << "x=" << x << " r=" << r << " seed=" << seed;
  }
  EXPECT_EQ(site.reported(), r);
  EXPECT_GT(site.Observe((1 + h) * r * 1.0001), 0);  // just above the band: up
  EXPECT_GT(site.reported(), r);
  EXPECT_NE(site.Observe(0), 0);  // the window empties: down to 0
  EXPECT_EQ(site.reported(), 0);
}

// The rule over every generated workload with the count synopsis it assumes:
// the root's value within eps_b of the exact window's count at every tick.
TEST(BasicCountRuleTest, EveryWorkloadWithinEpsB) {
  const uint64_t seed = testing::TestSeed();
  testing::ForEachRuleRun(seed, [&](const testing::RuleRun& run) {
    BasicCountSite site(run.eps);
    auto count = WindowCount::Create(run.spec, site.synopsis_eps());
    ASSERT_OK(count);
    uint64_t root = 0;
    testing::FirstFailures fail;
    testing::DriveWorkload(
        run, seed,
        [&](int64_t t, const std::vector<Arrival>& accepted, const ExactWindow& exact, std::vector<Message>&) {
          count->AdvanceTo(t);
          for (const Arrival& a : accepted) count->Update(a.ts);
          const int64_t delta = site.Observe(count->Estimate());
          root = static_cast<uint64_t>(static_cast<int64_t>(root) + delta);
          const double r = static_cast<double>(site.grid().Value(root)), c = static_cast<double>(exact.count());
          if (std::abs(r - c) > run.eps * c + 1e-9)
            fail(t, "root " + std::to_string(r) + ", exact " + std::to_string(c));
        });
    EXPECT_EQ(fail.count(), 0);
  });
}

}  // namespace
}  // namespace momenta
