// stream/window/flat_count_map.h: item -> count with open addressing, against
// a std::map through every size (the one-key shortcut and its ends, growth,
// backward-shift erase, Reset, Clear), and on keys that collide.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "stream/window/flat_count_map.h"
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

// A map never added to answers 0 for every key, iterates nothing and holds
// no table; Prefetch and Reset on it are harmless.
TEST(FlatCountMapTest, EmptyMapAnswersZero) {
  FlatCountMap map;
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.MemoryBytes(), 0u);
  for (int64_t k : {int64_t{0}, int64_t{-1}, INT64_MIN, INT64_MAX}) {
    map.Prefetch(k);
    EXPECT_EQ(map.Get(k), 0u);
  }
  map.Reset();
  int visits = 0;
  map.ForEach([&](int64_t, uint64_t) { ++visits; });
  EXPECT_EQ(visits, 0);
}

// Any int64 is a key (the extremes, 0 and -1 among them), counts go far past
// 32 bits, and a count brought to zero erases its key.
TEST(FlatCountMapTest, ExtremeKeysAndLargeCounts) {
  FlatCountMap map;
  const int64_t keys[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1};
  const uint64_t big = uint64_t{1} << 40;
  for (int64_t k : keys) EXPECT_EQ(map.Add(k, big), big);
  for (int64_t k : keys) EXPECT_EQ(map.Add(k, 3), big + 3);
  EXPECT_EQ(map.size(), std::size(keys));
  std::map<int64_t, uint64_t> got;
  map.ForEach([&](int64_t k, uint64_t c) { got[k] = c; });
  ASSERT_EQ(got.size(), std::size(keys));
  for (int64_t k : keys) EXPECT_EQ(got[k], big + 3) << "key " << k;
  map.Subtract(INT64_MIN, big);
  EXPECT_EQ(map.Get(INT64_MIN), 3u);
  map.Subtract(INT64_MIN, 3);
  EXPECT_EQ(map.Get(INT64_MIN), 0u);
  EXPECT_EQ(map.size(), std::size(keys) - 1);
  EXPECT_EQ(map.Get(INT64_MIN + 1), big + 3);  // a neighboring key is untouched
}

// Reset empties the map and keeps its table; Clear frees it. Both leave a map
// that takes new keys as a fresh one does, one key (the shortcut) or many.
TEST(FlatCountMapTest, ResetKeepsTheTableClearFreesIt) {
  FlatCountMap map;
  for (int64_t k = 0; k < 1000; ++k) map.Add(k * 7919, 1 + static_cast<uint64_t>(k % 5));
  const size_t table = map.MemoryBytes();
  EXPECT_GE(table, 1000 * 4 / 3 * (sizeof(int64_t) + sizeof(uint64_t)));  // load <= 3/4
  map.Reset();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.MemoryBytes(), table);
  for (int64_t k = 0; k < 1000; ++k) ASSERT_EQ(map.Get(k * 7919), 0u) << "key " << k * 7919;
  int visits = 0;
  map.ForEach([&](int64_t, uint64_t) { ++visits; });
  EXPECT_EQ(visits, 0);
  // One key after a Reset of many, then a Reset of the one.
  EXPECT_EQ(map.Add(42, 2), 2u);
  map.ForEach([&](int64_t k, uint64_t c) { EXPECT_TRUE(k == 42 && c == 2) << k << " " << c; });
  map.Reset();
  EXPECT_EQ(map.Get(42), 0u);
  EXPECT_EQ(map.Add(43, 1), 1u);
  EXPECT_EQ(map.Add(44, 1), 1u);
  EXPECT_EQ(map.size(), 2u);
  map.Clear();
  EXPECT_EQ(map.MemoryBytes(), 0u);
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.Get(43), 0u);
  EXPECT_EQ(map.Add(43, 5), 5u);
  EXPECT_EQ(map.Get(43), 5u);
}

// Dense tables (filled to just under the 3/4 load, where probe runs are long
// and wrap around the table's end) emptied key by key in random order: after
// every erase each remaining key still has its count (backward-shift erase
// moves the right entries and only those).
TEST(FlatCountMapTest, ErasesInDenseTablesKeepEveryOtherKey) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (size_t n : {size_t{6}, size_t{12}, size_t{24}, size_t{96}, size_t{384}}) {
    for (int round = 0; round < 20; ++round) {
      FlatCountMap map;
      std::map<int64_t, uint64_t> want;
      while (want.size() < n) {
        const int64_t k = static_cast<int64_t>(rng() % (4 * n)) - static_cast<int64_t>(n);
        const uint64_t d = 1 + rng() % 9;
        want[k] += d;
        map.Add(k, d);
      }
      std::vector<int64_t> order;
      for (const auto& [k, c] : want) order.push_back(k);
      std::shuffle(order.begin(), order.end(), rng);
      for (int64_t gone : order) {
        const uint64_t c = want[gone];
        if (c > 1 && rng() % 2 == 0) {  // first part of it, then the rest
          map.Subtract(gone, c - 1);
          ASSERT_EQ(map.Get(gone), 1u);
          map.Subtract(gone, 1);
        } else {
          map.Subtract(gone, c);
        }
        want.erase(gone);
        ASSERT_EQ(map.size(), want.size());
        ASSERT_EQ(map.Get(gone), 0u) << "n " << n << " round " << round << " key " << gone;
        for (const auto& [k, count] : want)
          ASSERT_EQ(map.Get(k), count) << "n " << n << " round " << round << " key " << k << " after erasing " << gone;
      }
      EXPECT_TRUE(map.empty());
    }
  }
}

}  // namespace
}  // namespace momenta
