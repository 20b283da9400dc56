// Summarizer (stream/window/summarizer.h) directly: what `momenta window`
// prints, against the exact window kept beside it (every accepted arrival,
// the window's rule from window_spec.h: at clock t, timestamps in
// [t − W + 1, t]; an arrival later than the tardiness allows is refused and
// counted as dropped). Random streams, seed printed: the count within its
// [low, high] and eps of the truth, the top items' estimates and the
// quantiles' ranks within eps of the window's size.
#include "stream/window/summarizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(SummarizerTest, RefusesABadSpecOrEps) {
  EXPECT_FALSE(Summarizer::Create(WindowSpec{100, 0}, 0.0).ok());
  EXPECT_FALSE(Summarizer::Create(WindowSpec{100, 0}, 1.0).ok());
  const auto late = Summarizer::Create(WindowSpec{100, 100}, 0.1);  // tau must be below W
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), Status::Code::kInvalidArgument);
  auto ok = Summarizer::Create(WindowSpec{100, 5}, 0.1);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->eps(), 0.1);
  EXPECT_GT(ok->MemoryBytes(), 0u);
  const WindowReport empty = ok->Report(3, {0.5});
  EXPECT_EQ(empty.count, 0);
  EXPECT_TRUE(empty.top.empty());
  ASSERT_EQ(empty.quantiles.size(), 1u);
  EXPECT_FALSE(empty.quantiles[0].second.has_value());
}

struct Arrived {
  int64_t ts;
  int64_t item;
};

void CheckReport(const Summarizer& s, const std::vector<Arrived>& kept, uint64_t dropped, int64_t window) {
  const int64_t t = s.now();
  std::vector<int64_t> items;
  for (const Arrived& a : kept)
    if (a.ts >= t - window + 1 && a.ts <= t) items.push_back(a.item);
  std::sort(items.begin(), items.end());
  const double n = static_cast<double>(items.size()), eps = s.eps();
  SCOPED_TRACE("clock " + std::to_string(t) + ", " + std::to_string(items.size()) + " items in the window");
  const WindowReport r = s.Report(5, {0.0, 0.25, 0.5, 0.9, 1.0});
  EXPECT_EQ(r.time, t);
  EXPECT_EQ(r.dropped, dropped);
  EXPECT_LE(r.count_low, items.size());
  EXPECT_GE(r.count_high, items.size());
  EXPECT_LE(std::fabs(r.count - n), eps * n + 1e-9);
  for (const ItemEstimate& e : r.top) {
    const auto [lo, hi] = std::equal_range(items.begin(), items.end(), e.item);
    EXPECT_LE(std::fabs(e.count - static_cast<double>(hi - lo)), eps * n + 1) << "item " << e.item;
  }
  for (const auto& [phi, value] : r.quantiles) {
    if (items.empty()) {
      EXPECT_FALSE(value.has_value());
      continue;
    }
    ASSERT_TRUE(value.has_value()) << "phi " << phi;
    const double below = static_cast<double>(std::lower_bound(items.begin(), items.end(), *value) - items.begin());
    const double at_most = static_cast<double>(std::upper_bound(items.begin(), items.end(), *value) - items.begin());
    EXPECT_LE(below, phi * n + 2 * eps * n + 1) << "phi " << phi << " value " << *value;
    EXPECT_GE(at_most, phi * n - 2 * eps * n - 1) << "phi " << phi << " value " << *value;
  }
}

TEST(SummarizerTest, RandomStreamsAgainstTheExactWindow) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 6; ++round) {
    const WindowSpec spec{static_cast<int64_t>(200 + rng() % 2000), static_cast<int64_t>(rng() % 50)};
    const double eps = round % 2 ? 0.05 : 0.1;
    SCOPED_TRACE("seed " + std::to_string(seed) + " round " + std::to_string(round) + " W " +
                 std::to_string(spec.window) + " tau " + std::to_string(spec.tardiness));
    auto made = Summarizer::Create(spec, eps);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Summarizer& s = *made;
    std::vector<Arrived> kept;
    uint64_t dropped = 0;
    // The first arrival sets the clock (before it, every timestamp is on time).
    ASSERT_TRUE(s.Add(0, 1));
    kept.push_back({0, 1});
    int64_t clock = s.now();
    ASSERT_EQ(clock, 0);
    for (int k = 0; k < 20000; ++k) {
      // Mostly on time, some late by up to 2·tau + 5 (past the tardiness: dropped).
      int64_t ts = clock + static_cast<int64_t>(rng() % 3);
      if (rng() % 10 == 0) ts = clock - static_cast<int64_t>(rng() % (2 * spec.tardiness + 6));
      const int64_t item = rng() % 4 == 0 ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % 500);
      clock = std::max(clock, ts);
      const bool accepted = ts + spec.tardiness >= clock;
      EXPECT_EQ(s.Add(ts, item), accepted) << "ts " << ts << " at clock " << clock;
      if (accepted)
        kept.push_back({ts, item});
      else
        ++dropped;
      if (k % 2500 == 2499) CheckReport(s, kept, dropped, spec.window);
    }
    // The clock moves on without arrivals: items expire.
    clock += spec.window / 2;
    s.AdvanceTo(clock);
    CheckReport(s, kept, dropped, spec.window);
    clock += spec.window;
    s.AdvanceTo(clock);
    CheckReport(s, kept, dropped, spec.window);
  }
}

}  // namespace
}  // namespace momenta
