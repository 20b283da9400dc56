// IndexSet (buffers/index_set.h) against std::unordered_set: random keys with
// many repeats, growth past the first capacity, clear() and reuse.
#include "buffers/index_set.h"

#include <gtest/gtest.h>

#include <random>
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

}  // namespace
}  // namespace momenta
