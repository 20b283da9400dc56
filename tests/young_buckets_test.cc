// The synopses at one item per tick, where every settled bucket starts young
// (exact entries in a shared log, young_log.h): ItemCounts and
// WindowQuantiles over many windows keep their bounds against an exact window,
// the log drops its dead entries (memory stays flat), and a decoded copy
// re-encodes the same bytes and keeps the bounds. Also the entry sort every
// bucket passes through (key_count_sort.h) on every path, and the counts map
// of every arrival (flat_count_map.h), whose one-key case takes a shortcut.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <map>
#include <string>
#include <vector>

#include "stream/testing/exact_window.h"
#include "stream/window/flat_count_map.h"
#include "stream/window/item_counts.h"
#include "stream/window/misra_gries.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(FlatCountMapTest, MatchesAReferenceMapThroughEverySize) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  FlatCountMap map;
  std::map<int64_t, uint64_t> want;
  auto same = [&](int step) {
    std::map<int64_t, uint64_t> got;
    map.ForEach([&](int64_t k, uint64_t c) { ASSERT_TRUE(got.emplace(k, c).second) << "key twice, step " << step; });
    ASSERT_EQ(got, want) << "step " << step;
    ASSERT_EQ(map.size(), want.size());
    for (const auto& [k, c] : want) ASSERT_EQ(map.Get(k), c);
  };
  for (int step = 0; step < 20000; ++step) {
    // Sizes hover around 0, 1 and 2 (the one-key shortcut and its ends), with
    // now and then a run up to a few hundred keys and back.
    const int64_t universe = step % 2000 < 1800 ? 3 : 400;
    const int64_t k = static_cast<int64_t>(rng() % universe) - 1;
    const unsigned op = static_cast<unsigned>(rng() % 10);
    if (op < 5) {
      const uint64_t d = 1 + rng() % 3;
      ASSERT_EQ(map.Add(k, d), want[k] += d);
    } else if (op < 8) {
      auto it = want.find(k);
      if (it != want.end()) {
        const uint64_t d = 1 + rng() % it->second;
        map.Subtract(k, d);
        if ((it->second -= d) == 0) want.erase(it);
      }
    } else if (op == 8 && rng() % 8 == 0) {
      map.Reset();
      want.clear();
    }
    same(step);
  }
}

TEST(SortEntriesByItemTest, MatchesAComparisonSortOnEveryPath) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> scratch;
  // (spread of ids, largest count): narrow ids take the radix sort (n >= 64),
  // wide ones a sort of words, ids and counts too wide for a word the
  // comparison sort.
  const std::pair<uint64_t, uint32_t> shapes[] = {
      {1, 1}, {300, 5}, {1 << 20, 300}, {uint64_t{1} << 32, 1u << 31}, {uint64_t{1} << 40, 1000},
      {~uint64_t{0}, 3}, {~uint64_t{0}, 1u << 31}};
  for (int round = 0; round < 400; ++round) {
    const auto [spread, max_count] = shapes[round % std::size(shapes)];
    const size_t n = round < 40 ? static_cast<size_t>(round) : 1 + rng() % 700;
    const int64_t base = round % 3 == 0 ? INT64_MIN : static_cast<int64_t>(rng());
    std::vector<ItemEntry> e(n);
    for (ItemEntry& x : e) {
      const uint64_t off = spread == ~uint64_t{0} ? rng() : rng() % spread;
      x.item = spread == ~uint64_t{0} ? static_cast<int64_t>(off)
                                      : static_cast<int64_t>(static_cast<uint64_t>(base) + off);
      if (spread != ~uint64_t{0} && static_cast<uint64_t>(x.item) < static_cast<uint64_t>(base) &&
          base != INT64_MIN)
        x.item = base;  // keep base + off from wrapping past INT64_MAX
      x.count = 1 + static_cast<uint32_t>(rng() % max_count);
    }
    if (n > 2) e[n / 2] = e[0];  // equal items
    std::vector<ItemEntry> want = e, got = e;
    std::stable_sort(want.begin(), want.end(), [](const ItemEntry& a, const ItemEntry& b) { return a.item < b.item; });
    SortEntriesByItem(got.data(), got.data() + got.size(), &scratch);
    // Equal items may come in any order: compare items, and each item's counts as a multiset.
    ASSERT_EQ(got.size(), want.size());
    auto by_item_count = [](const ItemEntry& a, const ItemEntry& b) {
      return a.item != b.item ? a.item < b.item : a.count < b.count;
    };
    std::sort(want.begin(), want.end(), by_item_count);
    for (size_t i = 0; i < got.size(); ++i)  // (packed entries: copied, not referenced; key_count_sort.h)
      ASSERT_EQ(LoadField(got[i], &ItemEntry::item), LoadField(want[i], &ItemEntry::item))
          << "round " << round << " at " << i;
    std::sort(got.begin(), got.end(), by_item_count);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(LoadField(got[i], &ItemEntry::count), LoadField(want[i], &ItemEntry::count)) << "round " << round;
  }
}

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
