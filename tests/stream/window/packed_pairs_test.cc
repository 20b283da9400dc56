// stream/window/packed_pairs.h: the in-memory packing of settled buckets;
// any keys (extremes included) and counts come back, by index, by look-up and
// in order. Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "stream/window/packed_pairs.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

// The in-memory packing of settled buckets: any keys (extremes included) and
// counts come back, by index, by look-up and in order.
TEST(PackedPairsTest, RoundTripsAtEveryWidth) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int round = 0; round < 300; ++round) {
    const size_t n = round < 4 ? static_cast<size_t>(round) : 1 + rng() % 700;
    const int key_shift = static_cast<int>(rng() % 64), count_shift = static_cast<int>(rng() % 32);
    std::vector<std::pair<int64_t, uint32_t>> want;
    int64_t key = round % 3 == 0 ? INT64_MIN : static_cast<int64_t>(rng() >> 1) - (int64_t{1} << 61);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t count = 1 + static_cast<uint32_t>(rng() >> (32 + count_shift));
      want.push_back({key, count});
      const uint64_t gap = 1 + (rng() >> key_shift);
      if (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(key) <= gap) break;
      key = static_cast<int64_t>(static_cast<uint64_t>(key) + gap);
    }
    if (round % 5 == 0 && !want.empty() && want.back().first != INT64_MAX) want.push_back({INT64_MAX, 7});
    PackedPairs p = PackedPairs::Pack(
        want.size(), [&](size_t i) { return want[i].first; }, [&](size_t i) { return want[i].second; });
    ASSERT_EQ(p.size(), want.size());
    size_t i = 0;
    p.ForEach([&](int64_t k, uint32_t c) {
      ASSERT_LT(i, want.size());
      EXPECT_EQ(k, want[i].first) << "round " << round << " pair " << i;
      EXPECT_EQ(c, want[i].second) << "round " << round << " pair " << i;
      ++i;
    });
    EXPECT_EQ(i, want.size());
    for (size_t j = 0; j < want.size(); j += 1 + j / 8) {
      EXPECT_EQ(p.key(j), want[j].first);
      EXPECT_EQ(p.count(j), want[j].second);
      EXPECT_EQ(p.Find(want[j].first), want[j].second);
    }
    if (!want.empty() && want[0].first != INT64_MIN) {
      EXPECT_EQ(p.Find(want[0].first - 1), 0u);
    }
    PackedPairs moved = std::move(p);
    EXPECT_EQ(moved.size(), want.size());
  }
}

}  // namespace
}  // namespace momenta
