// CoalescedReads: overlapping and touching requests merge into one read,
// every member's bytes found in place; separate ones stay apart; the size
// cap splits groups; groups sit at page-aligned places of a reused arena.
// Checked against the file's bytes.
#include "storage/io/read_coalescing.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(ReadCoalescingTest, MergedReadsFillEveryDestination) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("bytes");
  std::string bytes(1 << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  testing::WriteFileBytes(path, bytes);
  auto io = OpenIoBackend(path, IoOptions{});
  ASSERT_OK(io);
  ReadArena arena;  // reused from round to round, as a query thread reuses it
  for (int round = 0; round < 50; ++round) {
    std::vector<ReadRequest> requests(1 + rng() % 40);
    for (size_t k = 0; k < requests.size(); ++k) {
      const uint64_t offset = rng() % bytes.size();
      const size_t length = std::min<uint64_t>(rng() % 20000, bytes.size() - offset);
      requests[k] = {offset, length, nullptr};
    }
    const size_t cap = round % 2 ? 64 << 10 : 4 << 20;
    CoalescedReads batch(requests, cap);
    EXPECT_LE(batch.reads().size(), requests.size());
    char* memory = arena.Reserve(batch.bytes());
    ASSERT_NE(memory, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % 4096, 0u);
    batch.Place(memory);
    for (const ReadRequest& r : batch.reads()) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(r.dest) % 4096, 0u);
      EXPECT_LE(r.length, std::max<size_t>(cap, 20000));
      ASSERT_OK((*io)->Read(r.offset, r.length, r.dest));
    }
    for (size_t k = 0; k < requests.size(); ++k) {
      if (requests[k].length == 0) {
        EXPECT_EQ(batch.Where(k), nullptr);
        continue;
      }
      ASSERT_EQ(std::string(batch.Where(k), requests[k].length), bytes.substr(requests[k].offset, requests[k].length))
          << "request " << k;
    }
  }
}

TEST(ReadCoalescingTest, GroupsAreWhatOverlapsOrTouches) {
  const std::vector<ReadRequest> requests = {
      {1000, 100, nullptr},  // touches the next: merged
      {1100, 100, nullptr},
      {5000, 100, nullptr},  // alone
      {1050, 100, nullptr},  // inside the first group
  };
  CoalescedReads batch(requests);
  ASSERT_EQ(batch.reads().size(), 2u);
  EXPECT_EQ(batch.reads()[0].offset, 1000u);
  EXPECT_EQ(batch.reads()[0].length, 200u);
  EXPECT_EQ(batch.reads()[1].offset, 5000u);
  EXPECT_EQ(batch.bytes(), 2u * 4096);  // each group at a page of its own
  std::vector<char> memory(batch.bytes());
  batch.Place(memory.data());
  EXPECT_EQ(batch.Where(0), memory.data());
  EXPECT_EQ(batch.Where(1), memory.data() + 100);
  EXPECT_EQ(batch.Where(3), memory.data() + 50);
  EXPECT_EQ(batch.Where(2), memory.data() + 4096);
  CoalescedReads capped(requests, 150);
  EXPECT_EQ(capped.reads().size(), 3u);  // 1050 joins 1000 (150 bytes); 1100 would make 200
}

}  // namespace
}  // namespace momenta
