// CoalescedReads: overlapping and touching requests merge into one read
// whose bytes land in every member's destination; separate ones stay as they
// are; the size cap splits groups. Checked against the file's bytes.
#include "storage/read_coalescing.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(CoalescedReadsTest, MergedReadsFillEveryDestination) {
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
  for (int round = 0; round < 50; ++round) {
    std::vector<ReadRequest> requests(1 + rng() % 40);
    std::vector<std::string> dest(requests.size());
    for (size_t k = 0; k < requests.size(); ++k) {
      const uint64_t offset = rng() % bytes.size();
      const size_t length = std::min<uint64_t>(rng() % 20000, bytes.size() - offset);
      dest[k].assign(length, '\x55');
      requests[k] = {offset, length, dest[k].data()};
    }
    const size_t cap = round % 2 ? 64 << 10 : 4 << 20;
    CoalescedReads batch(requests, cap);
    ASSERT_TRUE(batch.ok());
    EXPECT_LE(batch.reads().size(), requests.size());
    for (const ReadRequest& r : batch.reads()) ASSERT_OK((*io)->Read(r.offset, r.length, r.dest));
    batch.Scatter();
    for (size_t k = 0; k < requests.size(); ++k)
      ASSERT_EQ(dest[k], bytes.substr(requests[k].offset, requests[k].length)) << "request " << k;
  }
}

TEST(CoalescedReadsTest, GroupsAreWhatOverlapsOrTouches) {
  char a[100], b[100], c[100], d[100];
  const std::vector<ReadRequest> requests = {
      {1000, 100, a},  // touches the next: merged
      {1100, 100, b},
      {5000, 100, c},  // alone
      {1050, 100, d},  // inside the first group
  };
  CoalescedReads batch(requests);
  ASSERT_EQ(batch.reads().size(), 2u);
  EXPECT_EQ(batch.reads()[0].offset, 1000u);
  EXPECT_EQ(batch.reads()[0].length, 200u);
  EXPECT_EQ(batch.reads()[1].offset, 5000u);
  EXPECT_EQ(batch.reads()[1].dest, c);  // a group of one reads into its own destination
  CoalescedReads capped(requests, 150);
  EXPECT_EQ(capped.reads().size(), 3u);  // 1050 joins 1000 (150 bytes); 1100 would make 200
}

}  // namespace
}  // namespace momenta
