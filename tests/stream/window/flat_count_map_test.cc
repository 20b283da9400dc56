// stream/window/flat_count_map.h: item -> count with open addressing, against
// a std::map through every size (the one-key shortcut and its ends, growth,
// backward-shift erase, Reset, Clear), and on keys that collide.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

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

}  // namespace
}  // namespace momenta
