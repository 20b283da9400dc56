// TreeLayout: the plan of every range covers it exactly, left to right, with
// whole nodes only and at most fanout-1 nodes per side on every level but the top.
#include "buffers/tree/tree_layout.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/test_util.h"

namespace momenta {
namespace {

void CheckPlan(const TreeLayout& t, uint64_t p, uint64_t q) {
  SCOPED_TRACE("range " + std::to_string(p) + ":" + std::to_string(q));
  auto plan = t.Decompose(p, q);
  if (p == q) {
    EXPECT_TRUE(plan.runs.empty());
    return;
  }
  uint64_t at = p;
  EXPECT_EQ(plan.raw_left_begin, p);
  at = plan.raw_left_end;
  EXPECT_LE(plan.raw_left_end - plan.raw_left_begin, 2 * t.leaf_span());
  std::vector<int> per_level(t.levels() + 1, 0);
  for (const auto& run : plan.runs) {
    ASSERT_GE(run.level, 1);
    ASSERT_LE(run.level, t.levels());
    ASSERT_GT(run.count, 0u);
    EXPECT_EQ(t.node_first(run.level, run.first), at) << "level " << run.level;
    at = t.node_end(run.level, run.first + run.count - 1);
    if (run.level < t.levels()) {
      EXPECT_LE(run.count, 2 * (t.fanout() - 1u));
    }
    per_level[run.level]++;
  }
  for (int k = 1; k <= t.levels(); ++k) EXPECT_LE(per_level[k], 2);
  if (plan.raw_right_end > plan.raw_right_begin) {
    EXPECT_EQ(plan.raw_right_begin, at);
    EXPECT_LT(plan.raw_right_end - plan.raw_right_begin, t.leaf_span());
    at = plan.raw_right_end;
  }
  EXPECT_EQ(at, q);
}

TEST(TreeLayoutTest, LevelsAndTiers) {
  TreeLayoutParams p;
  p.length = uint64_t{1} << 37;
  p.node_bytes = 64;
  p.ram_budget = 1 << 20;
  p.fanout = 64;
  TreeLayout t(p);
  EXPECT_EQ(t.leaf_span(), 8192u);  // 64 B per 64 KiB of f8: ~0.1%
  ASSERT_EQ(t.levels(), 4);         // 2^24, 2^18, 2^12, 2^6 nodes: the top has <= fanout
  EXPECT_EQ(t.nodes(1), uint64_t{1} << 24);
  EXPECT_EQ(t.nodes(4), 64u);
  EXPECT_EQ(t.ram_from(), 3);
  EXPECT_LE(t.ram_nodes() * 64, uint64_t{1} << 20);
  EXPECT_EQ(t.total_nodes(), (1u << 24) + (1u << 18) + (1u << 12) + 64);

  p.disk_tier = false;
  TreeLayout paper(p);
  EXPECT_EQ(paper.ram_from(), 1);
  EXPECT_LE(paper.total_nodes() * 64, uint64_t{1} << 20);
  EXPECT_GT(paper.total_nodes() * 64 * 2, uint64_t{1} << 20);  // the smallest bins that fit
}

TEST(TreeLayoutTest, EveryRangeOfSmallArrays) {
  for (uint64_t n : {1, 2, 5, 7, 16, 17, 63, 64, 65, 100, 257}) {
    for (uint64_t leaf : {1, 2, 3, 4}) {
      for (uint32_t fan : {2, 3, 4}) {
        TreeLayoutParams p;
        p.length = n;
        p.leaf_span = leaf;
        p.fanout = fan;
        TreeLayout t(p);
        SCOPED_TRACE("n=" + std::to_string(n) + " leaf=" + std::to_string(leaf) + " fanout=" + std::to_string(fan));
        for (uint64_t a = 0; a <= n; ++a)
          for (uint64_t b = a; b <= n; ++b) CheckPlan(t, a, b);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(TreeLayoutTest, RandomRangesOfHugeArrays) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    TreeLayoutParams p;
    p.length = 1 + rng() % (uint64_t{1} << 40);
    p.leaf_span = uint64_t{1} << (rng() % 16);
    p.fanout = 2 + rng() % 100;
    TreeLayout t(p);
    for (int k = 0; k < 50; ++k) {
      uint64_t a = rng() % (p.length + 1), b = rng() % (p.length + 1);
      if (a > b) std::swap(a, b);
      CheckPlan(t, a, b);
    }
  }
}

}  // namespace
}  // namespace momenta
