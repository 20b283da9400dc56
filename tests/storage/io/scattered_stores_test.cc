// ScatteredStores: a block's clean pages are dropped only when some of it was
// cached, at most once per object, and dropping never loses bytes: neither
// stores still dirty in the mapping nor what another writer put on disk.
// Fetch reads exactly the uncached pages asked for, each once.
#include "storage/io/scattered_stores.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "storage/io/mapped_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kBlock = ScatteredStores::kBlockBytes;

// A file of `blocks` blocks, block b filled with the byte 'a' + b, written
// with pwrite (so cached, possibly in large folios), then synced.
std::string WriteBlocks(const testing::ScratchDir& dir, int blocks) {
  const std::string path = dir.File("f");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  EXPECT_GE(fd, 0);
  std::vector<char> bytes(kBlock);
  for (int b = 0; b < blocks; ++b) {
    std::memset(bytes.data(), 'a' + b, bytes.size());
    EXPECT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(b * kBlock)),
              static_cast<ssize_t>(bytes.size()));
  }
  EXPECT_EQ(::fdatasync(fd), 0);
  ::close(fd);
  return path;
}

TEST(ScatteredStoresTest, DropsOnlyCachedBlocksAndOnlyOnce) {
  testing::ScratchDir dir;
  const std::string path = WriteBlocks(dir, 3);
  auto map = MappedFile::Open(path, /*writable=*/true);
  ASSERT_OK(map);
  // Block 2 leaves the cache entirely; blocks 0 and 1 stay (just written).
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::posix_fadvise(fd, 2 * kBlock, kBlock, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
  if ((*map)->AnyPageCached(2 * kBlock, kBlock)) GTEST_SKIP() << "the kernel kept block 2 cached";
  ASSERT_TRUE((*map)->AnyPageCached(0, kBlock));

  ScatteredStores stores(map->get());
  stores.Prepare(10);
  stores.Prepare(kBlock - 1);  // same block: nothing more
  EXPECT_EQ(stores.blocks_dropped(), 1u);
  stores.Prepare(2 * kBlock + 5);  // not cached: faults will bring base pages
  EXPECT_EQ(stores.blocks_dropped(), 1u);
  stores.Prepare(kBlock);
  EXPECT_EQ(stores.blocks_dropped(), 2u);
  for (int b = 0; b < 3; ++b)
    for (uint64_t at : {uint64_t{0}, kBlock / 2, kBlock - 1})
      ASSERT_EQ((*map)->data()[b * kBlock + at], 'a' + b) << "block " << b << " byte " << at;
}

TEST(ScatteredStoresTest, DirtyStoresSurviveDropping) {
  testing::ScratchDir dir;
  const std::string path = WriteBlocks(dir, 2);
  auto map = MappedFile::Open(path, /*writable=*/true);
  ASSERT_OK(map);
  char* data = (*map)->data();
  // Stores not yet written back, every 4 KiB page of block 0 and one of block 1.
  for (uint64_t at = 0; at < kBlock; at += 4096) data[at + 7] = 'X';
  data[kBlock + 12345] = 'Y';
  for (int round = 0; round < 2; ++round) {  // a fresh object drops again
    ScatteredStores stores(map->get());
    stores.Prepare(0);
    stores.Prepare(kBlock);
  }
  for (uint64_t at = 0; at < kBlock; at += 4096) {
    ASSERT_EQ(data[at + 7], 'X') << at;
    ASSERT_EQ(data[at + 8], 'a') << at;
  }
  EXPECT_EQ(data[kBlock + 12345], 'Y');
  EXPECT_EQ(data[kBlock + 12346], 'b');
  ASSERT_OK((*map)->FlushAll());
  // And on disk, read past the cache.
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  char c = 0;
  ASSERT_EQ(::pread(fd, &c, 1, kBlock + 12345), 1);
  EXPECT_EQ(c, 'Y');
  ::close(fd);
}

// Whether page `page` of the file is in the page cache, waiting up to 5 s for
// it to become so when `wait` (Fetch only starts the reads).
bool Resident(const MappedFile& map, uint64_t page, bool wait) {
  for (int k = 0; k < (wait ? 500 : 1); ++k) {
    std::vector<unsigned char> r;
    if (map.CachedPages(page * 4096, 4096, &r) && (r[0] & 1)) return true;
    if (wait) ::usleep(10000);
  }
  return false;
}

TEST(ScatteredStoresTest, FetchReadsTheUncachedPagesAskedForAndNoOthers) {
  testing::ScratchDir dir;
  const std::string path = WriteBlocks(dir, 2);
  auto map = MappedFile::Open(path, /*writable=*/true);
  ASSERT_OK(map);
  (*map)->DropCleanPages(0, 2 * kBlock);
  if ((*map)->AnyPageCached(0, 2 * kBlock)) GTEST_SKIP() << "the kernel kept the file cached";
  ScatteredStores stores(map->get());
  // Pages 3 (twice), 4 and 5 (a run), 100, and 512 + 7 in the second block,
  // in no order.
  std::vector<uint64_t> offsets = {100 * 4096 + 8,    3 * 4096,        5 * 4096 + 1,
                                   kBlock + 7 * 4096, 4 * 4096 + 4095, 3 * 4096 + 16};
  stores.Fetch(&offsets);
  EXPECT_EQ(stores.pages_fetched(), 5u);
  EXPECT_EQ(stores.blocks_dropped(), 0u);  // nothing was cached
  for (uint64_t page : {3, 4, 5, 100, 512 + 7}) EXPECT_TRUE(Resident(**map, page, true)) << page;
  for (uint64_t page : {0, 2, 6, 99, 101, 511, 512, 512 + 6, 512 + 8})
    EXPECT_FALSE(Resident(**map, page, false)) << page;
  // Asked again: all cached now, nothing more read.
  offsets = {3 * 4096, kBlock + 7 * 4096};
  stores.Fetch(&offsets);
  EXPECT_EQ(stores.pages_fetched(), 5u);
  // What is read back is what is on disk.
  EXPECT_EQ((*map)->data()[3 * 4096], 'a');
  EXPECT_EQ((*map)->data()[kBlock + 7 * 4096], 'b');
}

// A window asking for a quarter of a cached block's pages keeps the block
// (a hot set: its folio would be written back anyway); a sparse window in
// another cached block drops it.
TEST(ScatteredStoresTest, ADenseWindowKeepsItsCachedBlock) {
  testing::ScratchDir dir;
  const std::string path = WriteBlocks(dir, 2);
  auto map = MappedFile::Open(path, /*writable=*/true);
  ASSERT_OK(map);
  ASSERT_TRUE((*map)->AnyPageCached(0, kBlock));
  ScatteredStores stores(map->get());
  std::vector<uint64_t> offsets;
  for (uint64_t page = 0; page < 512; page += 4) offsets.push_back(page * 4096 + 8);  // 128 of 512 pages
  offsets.push_back(kBlock + 7 * 4096);                                               // one page of block 1
  stores.Fetch(&offsets);
  EXPECT_EQ(stores.blocks_dropped(), 1u);  // block 1 only
  for (uint64_t page : {1, 2, 255, 511}) EXPECT_TRUE(Resident(**map, page, false)) << page;
  EXPECT_EQ(stores.pages_fetched(), 1u);  // block 1's page, read back alone
}

// Once a block is found wholly cached, Fetch does not look at it again for
// kResidentWindows calls: a page evicted meanwhile is left to its fault (it
// costs its store a synchronous read, never a wrong byte), then read ahead
// again.
TEST(ScatteredStoresTest, AResidentBlockIsLookedAtAgainOnlyAfterSomeWindows) {
  testing::ScratchDir dir;
  const std::string path = WriteBlocks(dir, 1);
  auto map = MappedFile::Open(path, /*writable=*/true);
  ASSERT_OK(map);
  std::vector<uint64_t> all;
  for (uint64_t page = 0; page < 512; ++page) all.push_back(page * 4096);
  ScatteredStores stores(map->get());
  std::vector<uint64_t> offsets = all;
  stores.Fetch(&offsets);  // dense: kept, and found wholly resident
  if (stores.pages_fetched() != 0) GTEST_SKIP() << "the kernel did not keep the block cached";
  (*map)->DropCleanPages(0, kBlock);
  if ((*map)->AnyPageCached(0, kBlock)) GTEST_SKIP() << "the kernel kept the block cached";
  uint64_t calls = 1;
  for (; calls < ScatteredStores::kResidentWindows; ++calls) {
    offsets = all;
    stores.Fetch(&offsets);
  }
  EXPECT_EQ(stores.pages_fetched(), 0u);  // skipped while it was taken for resident
  offsets = all;
  stores.Fetch(&offsets);
  EXPECT_EQ(stores.pages_fetched(), 512u);  // looked at again: every page read ahead
  EXPECT_EQ((*map)->data()[4096 * 300], 'a');
}

TEST(ScatteredStoresTest, ALastBlockShorterThanTwoMebibytes) {
  testing::ScratchDir dir;
  const std::string path = dir.File("short");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const std::vector<char> bytes(kBlock + 5000, 'z');
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  auto map = MappedFile::Open(path, /*writable=*/true);
  ASSERT_OK(map);
  ScatteredStores stores(map->get());
  stores.Prepare(kBlock + 4999);
  (*map)->data()[kBlock + 4999] = 'w';
  EXPECT_EQ((*map)->data()[kBlock + 4998], 'z');
  EXPECT_EQ((*map)->data()[kBlock + 4999], 'w');
}

}  // namespace
}  // namespace momenta
