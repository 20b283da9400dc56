// stream/window/item_counts.h at one item per tick, where every settled bucket
// starts young (exact entries in a shared log, young_log.h): over many windows
// the counts keep their bounds against an exact window, the log drops its dead
// entries (memory stays flat), and a decoded copy re-encodes the same bytes and
// keeps the bounds. Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "stream/testing/exact_window.h"
#include "stream/window/item_counts.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(ItemCountsYoungTest, OneItemPerTickOverManyWindows) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  const WindowSpec spec{20000, 0};
  const double item_eps = 0.01;  // m = 99 counters, young buckets up to 99 items
  auto c = ItemCounts::Create(spec, item_eps);
  ASSERT_OK(c);
  ExactWindow exact(spec);
  // Heavy head, long tail, and a quiet stretch (no arrivals for half a window).
  auto draw = [&] {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return static_cast<int64_t>(std::pow(5000.0, u * u));
  };
  size_t memory_after_two_windows = 0;
  int violations = 0;
  const int64_t ticks = 6 * spec.window;
  for (int64_t t = 0; t < ticks; ++t) {
    c->AdvanceTo(t);
    exact.AdvanceTo(t);
    const bool quiet = t >= 3 * spec.window && t < 3 * spec.window + spec.window / 2;
    if (!quiet) {
      const int64_t item = draw();
      ASSERT_TRUE(c->Update(t, item));
      ASSERT_TRUE(exact.Add(t, item));
    }
    if (t == 2 * spec.window) memory_after_two_windows = c->MemoryBytes();
    if (t % 13 != 0 && t != ticks - 1) continue;  // checks are O(items); every 13th tick
    const double n = static_cast<double>(exact.count());
    if (std::abs(c->Count() - n) > item_eps / 2 * n + 1e-9) ++violations;
    auto check = [&](int64_t j) {
      const double cj = static_cast<double>(exact.Count(j));
      const ItemBounds b = c->Bounds(j);
      if (b.low > cj || b.high < cj || std::abs(c->Estimate(j) - cj) > item_eps * n + 1e-9) {
        if (violations++ < 5) ADD_FAILURE() << "tick " << t << " item " << j << ": " << c->Estimate(j) << " vs " << cj;
      }
    };
    for (int64_t j = 1; j <= 40; ++j) check(j);
    check(draw());
  }
  EXPECT_EQ(violations, 0);
  // Steady state: the log keeps no more than its live entries' worth of dead ones.
  EXPECT_LE(c->MemoryBytes(), memory_after_two_windows * 3 / 2)
      << "memory after 2 windows " << memory_after_two_windows << ", after 6 " << c->MemoryBytes();
  // A decoded copy (young buckets come back packed) writes the same bytes
  // and keeps the bounds as it goes on. (Not the same bytes later: when it
  // next compacts depends on a count the encoding does not keep.)
  const std::string bytes = c->Encode();
  auto d = ItemCounts::Decode(bytes);
  ASSERT_OK(d);
  ASSERT_EQ(d->Encode(), bytes);
  for (int64_t t = ticks; t < ticks + spec.window; ++t) {
    const int64_t item = draw();
    d->Update(t, item);
    exact.AdvanceTo(t);
    exact.Add(t, item);
    if (t % 13 != 0) continue;
    const double n = static_cast<double>(exact.count());
    for (int64_t j = 1; j <= 40; ++j) {
      const double cj = static_cast<double>(exact.Count(j));
      const ItemBounds b = d->Bounds(j);
      if (b.low > cj || b.high < cj || std::abs(d->Estimate(j) - cj) > item_eps * n + 1e-9) {
        if (violations++ < 5) ADD_FAILURE() << "decoded, tick " << t << " item " << j;
      }
    }
  }
  EXPECT_EQ(violations, 0);
}

}  // namespace
}  // namespace momenta
