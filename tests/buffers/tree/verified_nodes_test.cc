// VerifiedNodes: a slot recorded at an epoch is known at that epoch only;
// an odd epoch records and knows nothing; blocks forget their slots when the
// epoch moves; readers and recorders in several threads never see a slot as
// checked at an epoch it was not recorded at.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "buffers/tree/verified_nodes.h"

namespace momenta {
namespace {

TEST(VerifiedNodesTest, KnownAtItsEpochOnly) {
  VerifiedNodes v(10000);
  EXPECT_FALSE(v.Has(5, 0));
  v.Add(5, 0);
  EXPECT_TRUE(v.Has(5, 0));
  EXPECT_FALSE(v.Has(6, 0));
  EXPECT_FALSE(v.Has(5, 2)) << "a slot checked at epoch 0 is not known at epoch 2";
  v.Add(9999, 0);  // the last block
  EXPECT_TRUE(v.Has(9999, 0));
  // Recording at a newer epoch forgets the block's older slots.
  v.Add(6, 2);
  EXPECT_TRUE(v.Has(6, 2));
  EXPECT_FALSE(v.Has(5, 2));
  EXPECT_FALSE(v.Has(5, 0));
  // Another block keeps its own epoch until it is recorded into.
  EXPECT_TRUE(v.Has(9999, 0));
}

TEST(VerifiedNodesTest, OddEpochsHoldNothing) {
  VerifiedNodes v(100);
  v.Add(3, 7);
  EXPECT_FALSE(v.Has(3, 7));
  v.Add(3, 8);
  EXPECT_FALSE(v.Has(3, 7));
  EXPECT_TRUE(v.Has(3, 8));
}

// Threads record and ask at epochs that move; a slot is asked at the epoch
// a thread recorded it at, and never found at an epoch nobody recorded it at.
TEST(VerifiedNodesTest, ThreadsNeverSeeASlotAtAnEpochItWasNotRecordedAt) {
  constexpr uint64_t kSlots = 3 * 4096;
  VerifiedNodes v(kSlots);
  // Slots whose number is odd are only ever recorded at epochs 4k; even
  // ones at epochs 4k + 2: asking an odd slot at 4k + 2 must say no.
  std::atomic<int> wrong{0};
  auto work = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 200000; ++step) {
      const uint64_t epoch = 2 * (rng() % 8);
      const uint64_t slot = rng() % kSlots;
      const bool allowed = (slot % 2 == 1) == (epoch % 4 == 0);
      if (allowed) v.Add(slot, epoch);
      if (!allowed && v.Has(slot, epoch)) wrong.fetch_add(1);
    }
  };
  std::printf("seeds 1, 2\n");
  std::thread a(work, 1), b(work, 2);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace momenta
