// The small pieces of stream/: the count grid, the clock and tardiness rules,
// expiry without arrivals, the quantile interval rule on duplicates, and
// parameter validation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "stream/protocol/count_grid.h"
#include "stream/window/item_counts.h"
#include "stream/protocol/rank_steps.h"
#include "stream/protocol/site.h"
#include "stream/protocol/virtual_root.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
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

TEST(WindowClockTest, TardinessAcceptsExactlyTauLate) {
  auto c = WindowCount::Create({10, 3}, 0.1);
  ASSERT_OK(c);
  c->AdvanceTo(100);
  EXPECT_TRUE(c->Update(97));   // exactly tau late
  EXPECT_FALSE(c->Update(96));  // one more: dropped
  EXPECT_TRUE(c->Update(100));
  EXPECT_EQ(c->dropped(), 1u);
  EXPECT_EQ(c->Estimate(), 2);
  // A late item expires with its own timestamp, not its arrival time.
  c->AdvanceTo(107);
  EXPECT_EQ(c->Estimate(), 1);
  c->AdvanceTo(110);
  EXPECT_EQ(c->Estimate(), 0);
  // A timestamp ahead of the clock moves the clock (the data's own clock).
  EXPECT_TRUE(c->Update(200));
  EXPECT_EQ(c->now(), 200);
}

TEST(WindowClockTest, ExpiresWithoutArrivals) {
  auto items = ItemCounts::Create({50, 0}, 0.01);
  auto quant = WindowQuantiles::Create({50, 0}, 0.05);
  ASSERT_OK(items);
  ASSERT_OK(quant);
  for (int64_t t = 0; t < 200; ++t)
    for (int i = 0; i < 100; ++i) {
      items->Update(t, i % 7);
      quant->Update(t, i);
    }
  EXPECT_GT(items->Count(), 4000);
  // Time passes, nothing arrives: everything leaves, exactly.
  items->AdvanceTo(249);
  quant->AdvanceTo(249);
  EXPECT_EQ(items->Count(), 0);
  EXPECT_EQ(items->Estimate(3), 0);
  EXPECT_TRUE(items->Top(5).empty());
  EXPECT_EQ(quant->Count(), 0);
  EXPECT_FALSE(quant->Quantile(0.5).has_value());
}

TEST(WindowClockTest, RootReachesZeroWhenSitesGoIdle) {
  SiteOptions o;
  o.spec = {20, 0};
  o.eps = 0.1;
  auto site = Site::Create(0, o);
  ASSERT_OK(site);
  VirtualRoot root(1, o.eps);
  std::vector<Message> out;
  for (int64_t t = 0; t < 100; ++t) {
    std::vector<Arrival> arr;
    if (t < 30)
      for (int i = 0; i < 50; ++i) arr.push_back({t, i % 5});
    out.clear();
    (*site)->Tick(t, arr, &out);
    for (const Message& m : out) root.Apply(m);
    if (t == 29) {
      EXPECT_NEAR(root.Count(), 1000, 1000 * 0.1 / 24);
      EXPECT_EQ(root.Frequent(0.1).size(), 5u);
    }
  }
  EXPECT_EQ(root.Count(), 0);
  EXPECT_EQ(root.ItemCount(3), 0);
  EXPECT_TRUE(root.Frequent(0.1).empty());
  EXPECT_FALSE(root.QuantileByDrift(0.5).has_value());
}

// stream/REFERENCE.md §4.2: one site, window {1, 2, 2, 2}, phi = 0.6. The value 2 holds
// ranks 2..4; "minimise |R(x) - T|" picks 1, the interval rule picks 2.
TEST(RankStepsTest, IntervalRuleHandlesDuplicates) {
  RankSteps s;
  s.values = {1, 2};
  s.levels = {1, 4};
  s.count = 4;
  EXPECT_EQ(AnswerQuantile({&s}, 0.6), 2);
  EXPECT_EQ(AnswerQuantile({&s}, 0.0), 1);
  EXPECT_EQ(AnswerQuantile({&s}, 1.0), 2);
  EXPECT_EQ(s.At(0), 0);
  EXPECT_EQ(s.At(1), 1);
  EXPECT_EQ(s.At(5), 4);
  RankSteps empty;
  EXPECT_FALSE(AnswerQuantile({&empty}, 0.5).has_value());
  // Two sites interleave.
  RankSteps a, b;
  a.values = {10, 30};
  a.levels = {1, 2};
  a.count = 2;
  b.values = {20, 40};
  b.levels = {1, 2};
  b.count = 2;
  EXPECT_EQ(AnswerQuantile({&a, &b}, 0.5), 20);
  EXPECT_EQ(AnswerQuantile({&a, &b}, 1.0), 40);
}

TEST(StreamParamsTest, RefusedWithOneLineMessages) {
  auto bad_w = WindowCount::Create({0, 0}, 0.1);
  ASSERT_FALSE(bad_w.ok());
  EXPECT_EQ(bad_w.status().ToString(), "Invalid argument: window: W must lie in [1, 2^61], got 0");
  auto bad_tau = ItemCounts::Create({10, 10}, 0.1);
  ASSERT_FALSE(bad_tau.ok());
  EXPECT_EQ(bad_tau.status().ToString(),
            "Invalid argument: window: tardiness must lie in [0, W-1], got 10 with W = 10");
  auto bad_eps = WindowQuantiles::Create({10, 0}, 1.5);
  ASSERT_FALSE(bad_eps.ok());
  EXPECT_EQ(bad_eps.status().code(), Status::Code::kInvalidArgument);
  SiteOptions o;
  o.eps = 0;
  EXPECT_FALSE(Site::Create(0, o).ok());
}

}  // namespace
}  // namespace momenta
