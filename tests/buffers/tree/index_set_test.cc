// IndexSet and IndexMap (buffers/tree/index_set.h) against std::unordered_set and
// std::unordered_map: random keys with many repeats, growth past the first
// capacity, clear() and reuse.
#include "buffers/tree/index_set.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <unordered_set>

#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(IndexSetTest, AgreesWithUnorderedSet) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  IndexSet set(4);
  for (int round = 0; round < 3; ++round) {
    std::unordered_set<uint64_t> reference;
    for (int k = 0; k < 200000; ++k) {
      // Small keys repeat often; huge ones (UINT64_MAX - 1 included) test hashing.
      const uint64_t key = (k % 3 == 0) ? rng() % 5000 : (k % 3 == 1) ? rng() : UINT64_MAX - 1 - rng() % 3;
      ASSERT_EQ(set.insert(key), reference.insert(key).second) << "key " << key;
      ASSERT_EQ(set.size(), reference.size());
    }
    set.clear();
    EXPECT_EQ(set.size(), 0u);
    EXPECT_TRUE(set.insert(7));
    EXPECT_FALSE(set.insert(7));
    set.clear();
  }
}

TEST(IndexSetMapTest, AgreesWithUnorderedMap) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  IndexMap map(4);
  for (int round = 0; round < 3; ++round) {
    std::unordered_map<uint64_t, uint32_t> reference;
    for (uint32_t k = 0; k < 100000; ++k) {
      const uint64_t key = (k % 3 == 0) ? rng() % 3000 : (k % 3 == 1) ? rng() : UINT64_MAX - 1 - rng() % 3;
      const uint32_t want = reference.emplace(key, k).first->second;  // the first value given stays
      ASSERT_EQ(map.FindOrInsert(key, k), want) << "key " << key;
      ASSERT_EQ(map.size(), reference.size());
    }
    map.clear();  // forgets every key: each is new again
    EXPECT_EQ(map.size(), 0u);
    EXPECT_EQ(map.FindOrInsert(7, 1), 1u);
    EXPECT_EQ(map.FindOrInsert(7, 2), 1u);
    map.clear();
  }
}

}  // namespace
}  // namespace momenta
