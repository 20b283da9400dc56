// stream/window/window_quantiles.h at one value per tick, where every settled
// bucket starts young (young_log.h): over many windows the quantiles and ranks
// keep their bounds against an exact window, memory stays flat, and a decoded
// copy re-encodes the same bytes and keeps the bounds. Seeds are printed;
// MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "stream/testing/exact_window.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(WindowQuantilesYoungTest, OneValuePerTickOverManyWindows) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  const WindowSpec spec{20000, 0};
  const double eps = 0.05;  // young buckets up to min(2m, 256) = 160 items
  auto q = WindowQuantiles::Create(spec, eps);
  ASSERT_OK(q);
  ExactWindow exact(spec);
  // Values drift upward over time (ranks move), with repeats and a quiet stretch.
  auto draw = [&](int64_t t) { return t / 50 + static_cast<int64_t>(rng() % 3000); };
  size_t memory_after_two_windows = 0;
  int violations = 0;
  auto check = [&](const WindowQuantiles& w, int64_t t) {
    const double c = static_cast<double>(exact.count());
    if (w.RankErrorBound() > eps * c + 1e-9) ++violations;
    const RankSnapshot snap = w.Snapshot();
    for (double phi : {0.0, 0.1, 0.5, 0.9, 1.0}) {
      auto v = snap.ValueAtRank(phi * snap.total());
      if (c == 0 ? v.has_value() : !v.has_value() || !QuantileOk(exact, *v, phi, eps)) {
        if (violations++ < 5) ADD_FAILURE() << "tick " << t << " phi " << phi;
      }
    }
    if (c > 0) {
      const int64_t x = exact.AtRank(rng() % exact.count());
      if (std::abs(w.Rank(x) - static_cast<double>(exact.RankLessEq(x))) > w.RankErrorBound() + 1e-9) {
        if (violations++ < 5) ADD_FAILURE() << "tick " << t << " rank of " << x;
      }
    }
  };
  const int64_t ticks = 6 * spec.window;
  for (int64_t t = 0; t < ticks; ++t) {
    q->AdvanceTo(t);
    exact.AdvanceTo(t);
    const bool quiet = t >= 3 * spec.window && t < 3 * spec.window + spec.window / 2;
    if (!quiet) {
      const int64_t v = draw(t);
      ASSERT_TRUE(q->Update(t, v));
      ASSERT_TRUE(exact.Add(t, v));
    }
    if (t == 2 * spec.window) memory_after_two_windows = q->MemoryBytes();
    if (t % 29 == 0 || t == ticks - 1) check(*q, t);
  }
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(q->over_budget_collapses(), 0u);
  EXPECT_LE(q->MemoryBytes(), memory_after_two_windows * 3 / 2)
      << "memory after 2 windows " << memory_after_two_windows << ", after 6 " << q->MemoryBytes();
  const std::string bytes = q->Encode();
  auto d = WindowQuantiles::Decode(bytes);
  ASSERT_OK(d);
  ASSERT_EQ(d->Encode(), bytes);
  for (int64_t t = ticks; t < ticks + spec.window; ++t) {
    const int64_t v = draw(t);
    d->Update(t, v);
    exact.AdvanceTo(t);
    exact.Add(t, v);
    if (t % 29 == 0) check(*d, t);
  }
  EXPECT_EQ(violations, 0);
}

}  // namespace
}  // namespace momenta
