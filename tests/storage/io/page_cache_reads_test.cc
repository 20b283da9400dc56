// What the io_uring backend's reads leave in the page cache (IoOptions::
// direct_min_bytes, IoOptions::readahead): a short read goes through the page
// cache and stays there, bringing in only its own pages; a long aligned read
// streams past it through O_DIRECT; a read of cached bytes after a write (a
// pwrite or a store through a shared mapping) sees the new bytes.
//
// Residency is asked with mincore(2) over a fresh mapping of the file, after
// its pages were dropped with POSIX_FADV_DONTNEED (the file is fsynced first,
// so every page is clean and droppable). Cases skip with the reason where the
// kernel refuses a ring or the file system O_DIRECT.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "storage/io/io_backend.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ::momenta::testing::ScratchDir;
using ::momenta::testing::TestSeed;

constexpr size_t kPage = 4096;
constexpr size_t kFileBytes = 4 << 20;

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<char, FreeDeleter>;
AlignedBytes Aligned(size_t n) { return AlignedBytes(static_cast<char*>(std::aligned_alloc(kPage, n))); }

class PageCacheReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t seed = TestSeed();
    std::printf("MOMENTA_SEED=%llu\n", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    file_.resize(kFileBytes);
    for (char& c : file_) c = static_cast<char>(rng());
    path_ = dir_.File("data.bin");
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    ASSERT_EQ(::pwrite(fd, file_.data(), file_.size(), 0), static_cast<ssize_t>(file_.size()));
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
    IoOptions probe;
    probe.kind = IoKind::kUring;
    auto b = OpenIoBackend(path_, probe);
    if (!b.ok() && b.status().code() == Status::Code::kNotSupported) GTEST_SKIP() << b.status().ToString();
    ASSERT_OK(b);
    if ((*b)->Name() != "io_uring (O_DIRECT)") GTEST_SKIP() << "the file system refuses O_DIRECT here";
  }

  std::unique_ptr<IoBackend> Open(IoOptions o) {
    o.kind = IoKind::kUring;
    auto b = OpenIoBackend(path_, o);
    EXPECT_OK(b);
    return b.ok() ? std::move(b).value() : nullptr;
  }

  // Drops every page of the file from the page cache.
  void DropCache() {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    ::close(fd);
    ASSERT_EQ(Resident().size(), 0u) << "the page cache kept pages of the file after DONTNEED";
  }

  // The indices of the file's pages the page cache holds.
  std::vector<size_t> Resident() {
    std::vector<size_t> pages;
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    void* map = ::mmap(nullptr, kFileBytes, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    EXPECT_NE(map, MAP_FAILED);
    if (map == MAP_FAILED) return pages;
    std::vector<unsigned char> in(kFileBytes / kPage);
    EXPECT_EQ(::mincore(map, kFileBytes, in.data()), 0) << std::strerror(errno);
    ::munmap(map, kFileBytes);
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k] & 1) pages.push_back(k);
    return pages;
  }

  // Reads [offset, offset + length) through `b` and checks the bytes.
  void ReadAndCheck(IoBackend& b, uint64_t offset, size_t length) {
    AlignedBytes buf = Aligned(length);
    ASSERT_OK(b.Read(offset, length, buf.get()));
    ASSERT_EQ(std::memcmp(buf.get(), file_.data() + offset, length), 0) << "offset " << offset;
  }

  static std::vector<size_t> PagesOf(std::initializer_list<std::pair<uint64_t, size_t>> ranges) {
    std::vector<size_t> pages;
    for (auto [offset, length] : ranges)
      for (uint64_t p = offset / kPage; p < (offset + length + kPage - 1) / kPage; ++p) pages.push_back(p);
    return pages;
  }

  ScratchDir dir_;
  std::string path_;
  std::string file_;
};

TEST_F(PageCacheReadsTest, ShortReadsStayCachedAndBringInOnlyTheirPages) {
  auto b = Open(IoOptions{});
  ASSERT_NE(b, nullptr);
  DropCache();
  // Two aligned pieces like a query's end leaves, read in one batch, and a
  // misaligned one (buffered whatever the policy).
  AlignedBytes x = Aligned(64 << 10), y = Aligned(16 << 10), z = Aligned(2 * kPage);
  const ReadRequest batch[] = {
      {1 << 20, 64 << 10, x.get()}, {3 << 20, 16 << 10, y.get()}, {(2 << 20) + 100, 5000, z.get()}};
  ASSERT_OK(b->ReadBatch(batch));
  for (const ReadRequest& r : batch) ASSERT_EQ(std::memcmp(r.dest, file_.data() + r.offset, r.length), 0);
  EXPECT_EQ(Resident(), PagesOf({{1 << 20, 64 << 10}, {(2 << 20) + 100, 5000}, {3 << 20, 16 << 10}}))
      << "the pages read, and no page more (readahead off)";
}

TEST_F(PageCacheReadsTest, LongAlignedReadsStreamPastTheCache) {
  IoOptions o;
  o.cache_first = false;
  auto b = Open(o);
  ASSERT_NE(b, nullptr);
  DropCache();
  ReadAndCheck(*b, 1 << 20, o.direct_min_bytes);  // as long as the threshold: O_DIRECT
  EXPECT_EQ(Resident().size(), 0u);
}

TEST_F(PageCacheReadsTest, NoThresholdReadsEveryAlignedPieceDirect) {
  IoOptions o;
  o.direct_min_bytes = 0;
  auto b = Open(o);
  ASSERT_NE(b, nullptr);
  DropCache();
  ReadAndCheck(*b, 1 << 20, 16 << 10);
  EXPECT_EQ(Resident().size(), 0u);
}

TEST_F(PageCacheReadsTest, ReadaheadOptionReadsBeyondTheRequest) {
  IoOptions o;
  o.readahead = true;
  auto b = Open(o);
  ASSERT_NE(b, nullptr);
  DropCache();
  // A read at the file's start opens the kernel's first readahead window (a
  // random read elsewhere, with no history, is read as it is either way);
  // its size is the kernel's choice, more than the 4 pages asked unless the
  // device has readahead off.
  ReadAndCheck(*b, 0, 16 << 10);
  const size_t resident = Resident().size();
  if (resident == 4) GTEST_SKIP() << "this device has readahead off (read_ahead_kb 0)";
  EXPECT_GT(resident, 4u);
}

TEST_F(PageCacheReadsTest, ReadaheadOffReadsOnlyTheRequestAtTheStart) {
  auto b = Open(IoOptions{});
  ASSERT_NE(b, nullptr);
  DropCache();
  ReadAndCheck(*b, 0, 16 << 10);
  EXPECT_EQ(Resident(), PagesOf({{0, 16 << 10}}));
}

// A cached read after a change reads the change: through the backend's own
// pwrite, another descriptor's pwrite, and a store through a shared mapping
// (as an array writer stores).
TEST_F(PageCacheReadsTest, CachedBytesAreNeverStaleAfterAWrite) {
  IoOptions o;
  o.writable = true;
  auto b = Open(o);
  ASSERT_NE(b, nullptr);
  DropCache();
  const uint64_t at = 1 << 20;
  ReadAndCheck(*b, at, 16 << 10);
  ASSERT_EQ(Resident().size(), 4u);

  const std::string own(300, 'a');
  ASSERT_OK(b->Write(at + 10, own));
  file_.replace(at + 10, own.size(), own);
  ReadAndCheck(*b, at, 16 << 10);

  const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string other(500, 'b');
  ASSERT_EQ(::pwrite(fd, other.data(), other.size(), at + 5000), static_cast<ssize_t>(other.size()));
  file_.replace(at + 5000, other.size(), other);
  ReadAndCheck(*b, at, 16 << 10);

  char* map = static_cast<char*>(::mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  std::memset(map + at + 9000, 'c', 700);
  file_.replace(at + 9000, 700, std::string(700, 'c'));
  ReadAndCheck(*b, at, 16 << 10);
  ::munmap(map, kFileBytes);
}

}  // namespace
}  // namespace momenta
