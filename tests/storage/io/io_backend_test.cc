// One suite over every I/O backend (pread, mmap, io_uring with and without
// O_DIRECT): the IoBackend contract of storage/io/io_backend.h, checked against
// plain in-memory copies of the file. io_uring cases skip, with the kernel's
// reason, where the kernel refuses a ring.
//
// Plus the factory's fallback: in a forked child that forbids io_uring_setup
// with a seccomp filter, kAuto must fall back to pread and say so, and kUring
// must fail with NotSupported rather than crash.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
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

using ::momenta::testing::ReadFileBytes;
using ::momenta::testing::ScratchDir;
using ::momenta::testing::TestSeed;
using ::momenta::testing::WriteFileBytes;

constexpr size_t kPage = 4096;

std::string RandomBytes(size_t n, std::mt19937_64& rng) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A zeroed buffer whose start is page aligned, so tests choose the exact
// (mis)alignment of each destination.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t size)
      : size_(size), data_(static_cast<char*>(std::aligned_alloc(kPage, RoundUp(size)))) {
    std::memset(data_.get(), 0, RoundUp(size));
  }
  char* data() { return data_.get(); }
  size_t size() const { return size_; }

 private:
  static size_t RoundUp(size_t n) { return (n + kPage - 1) / kPage * kPage + kPage; }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  size_t size_;
  std::unique_ptr<char, Free> data_;
};

// Writes `bytes` and makes them real blocks on disk (not delayed allocation),
// which is where a misaligned O_DIRECT read would fail.
void WriteSynced(const std::string& path, const std::string& bytes) {
  WriteFileBytes(path, bytes);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fsync(fd), 0);
  ::close(fd);
}

void Truncate(const std::string& path, off_t size) {
  ASSERT_EQ(::truncate(path.c_str(), size), 0) << std::strerror(errno);
}

struct BackendParam {
  const char* name;
  IoKind kind;
  bool direct;
};

std::ostream& operator<<(std::ostream& os, const BackendParam& p) { return os << p.name; }

class IoBackendTest : public ::testing::TestWithParam<BackendParam> {
 protected:
  void SetUp() override {
    // A backend that cannot start here (io_uring refused by the kernel, or
    // not built) skips every case with the reason.
    const std::string probe = dir_.File("probe");
    WriteFileBytes(probe, "x");
    auto backend = OpenIoBackend(probe, Options(false, 8));
    if (!backend.ok() && backend.status().code() == Status::Code::kNotSupported)
      GTEST_SKIP() << GetParam().name << ": " << backend.status().ToString();
    ASSERT_OK(backend);
  }

  IoOptions Options(bool writable, unsigned queue_depth) const {
    IoOptions o;
    o.kind = GetParam().kind;
    o.writable = writable;
    o.queue_depth = queue_depth;
    o.direct = GetParam().direct;
    o.direct_min_bytes = 0;  // every aligned read direct, however short: the suite's O_DIRECT cases
    return o;
  }

  // The backend over `path`, or null (with a test failure) when it cannot open.
  std::unique_ptr<IoBackend> Open(const std::string& path, bool writable = false, unsigned queue_depth = 8) {
    auto backend = OpenIoBackend(path, Options(writable, queue_depth));
    EXPECT_OK(backend);
    if (!backend.ok()) return nullptr;
    return std::move(backend).value();
  }

  std::string ReadString(IoBackend& b, uint64_t offset, size_t length) {
    std::string out(length, '\0');
    Status s = b.Read(offset, length, out.data());
    EXPECT_OK(s) << " (offset " << offset << ", length " << length << ")";
    return out;
  }

  ScratchDir dir_;
};

TEST_P(IoBackendTest, NameMatchesKind) {
  const std::string path = dir_.File("a.bin");
  WriteSynced(path, std::string(3 * kPage, 'a'));
  auto b = Open(path);
  ASSERT_NE(b, nullptr);
  switch (GetParam().kind) {
    case IoKind::kPread:
      EXPECT_EQ(b->Name(), "pread");
      break;
    case IoKind::kMmap:
      EXPECT_EQ(b->Name(), "mmap");
      break;
    default: {
      // Where the file system takes O_DIRECT, the direct descriptor must be in use.
      const bool fs_direct = ProbeDirectIoAlignment(path).offset != 0;
      EXPECT_EQ(b->Name(), GetParam().direct && fs_direct ? "io_uring (O_DIRECT)" : "io_uring");
    }
  }
  EXPECT_EQ(b->path(), path);
}

TEST_P(IoBackendTest, WriteThenReadRoundTrip) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string path = dir_.File("rt.bin");
  WriteFileBytes(path, "");
  auto b = Open(path, /*writable=*/true);
  ASSERT_NE(b, nullptr);

  const std::string head = RandomBytes(100, rng);
  const std::string tail = RandomBytes(5000, rng);
  ASSERT_OK(b->Write(0, head));
  ASSERT_OK(b->Write(3 * kPage + 7, tail));  // extends the file, leaves a hole
  ASSERT_EQ(b->Size().value(), 3 * kPage + 7 + tail.size());
  EXPECT_EQ(ReadString(*b, 0, head.size()), head);
  EXPECT_EQ(ReadString(*b, 3 * kPage + 7, tail.size()), tail);
  EXPECT_EQ(ReadString(*b, head.size(), 3 * kPage + 7 - head.size()), std::string(3 * kPage + 7 - head.size(), '\0'));

  // Overwrite inside what was read before: the new bytes come back.
  const std::string patch = RandomBytes(kPage, rng);
  ASSERT_OK(b->Write(2 * kPage, patch));
  EXPECT_EQ(ReadString(*b, 2 * kPage, kPage), patch);
  ASSERT_OK(b->Sync());
  b.reset();

  std::string expect = head + std::string(3 * kPage + 7 - head.size(), '\0') + tail;
  expect.replace(2 * kPage, kPage, patch);
  EXPECT_EQ(ReadFileBytes(path), expect);
}

TEST_P(IoBackendTest, LongRandomBatchMatchesReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string path = dir_.File("batch.bin");
  const std::string file = RandomBytes(4 * 1024 * 1024 + 321, rng);
  WriteSynced(path, file);
  auto b = Open(path, false, /*queue_depth=*/8);  // far fewer than the batch
  ASSERT_NE(b, nullptr);

  // Half the requests are page aligned in file and memory (the O_DIRECT
  // path), half are not; ranges may overlap in the file.
  constexpr int kRequests = 700;
  std::vector<ReadRequest> requests;
  std::vector<size_t> dest_at;
  size_t arena_size = 0;
  for (int i = 0; i < kRequests; ++i) {
    ReadRequest r;
    const bool aligned = rng() % 2 == 0;
    if (aligned) {
      r.offset = rng() % (file.size() / kPage) * kPage;
      r.length = (1 + rng() % 16) * kPage;
      r.length = std::min<size_t>(r.length, (file.size() - r.offset) / kPage * kPage);
      arena_size = (arena_size + kPage - 1) / kPage * kPage;
    } else {
      r.offset = rng() % file.size();
      r.length = rng() % std::min<size_t>(70000, file.size() - r.offset + 1);
      arena_size += rng() % 64;
    }
    if (i % 50 == 0) r.length = 0;  // empty requests are skipped, wherever they sit
    requests.push_back(r);
    dest_at.push_back(arena_size);
    arena_size += r.length;
  }
  AlignedBuffer arena(arena_size);
  for (size_t i = 0; i < requests.size(); ++i) requests[i].dest = arena.data() + dest_at[i];

  Status s = b->ReadBatch(requests);
  ASSERT_OK(s);
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& r = requests[i];
    ASSERT_EQ(std::memcmp(r.dest, file.data() + r.offset, r.length), 0)
        << "request " << i << ": offset " << r.offset << ", length " << r.length;
  }
}

TEST_P(IoBackendTest, MisalignedReadsOfWrittenData) {
  // Misaligned O_DIRECT reads fail with EINVAL on written blocks (on holes
  // they succeed), so alignment mistakes only show on written data.
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string path = dir_.File("written.bin");
  const std::string file = RandomBytes(256 * 1024 + 123, rng);
  WriteSynced(path, file);
  auto b = Open(path);
  ASSERT_NE(b, nullptr);

  const uint64_t offsets[] = {0, 1, 127, 128, 511, 512, 4095, 4096, 4097, 65536 + 3};
  const size_t lengths[] = {1, 7, 511, 512, 4095, 4096, 4097, 65536, 65537};
  const size_t dest_shifts[] = {0, 1, 8, 512, 4096};
  AlignedBuffer buf(65537 + 4096);
  std::vector<ReadRequest> batch;
  std::vector<std::unique_ptr<AlignedBuffer>> batch_bufs;
  for (uint64_t offset : offsets) {
    for (size_t length : lengths) {
      for (size_t shift : dest_shifts) {
        char* dest = buf.data() + shift;
        Status s = b->Read(offset, length, dest);
        ASSERT_OK(s) << " offset " << offset << " length " << length << " dest+" << shift;
        ASSERT_EQ(std::memcmp(dest, file.data() + offset, length), 0)
            << "offset " << offset << " length " << length << " dest+" << shift;
        batch_bufs.push_back(std::make_unique<AlignedBuffer>(length + shift));
        batch.push_back({offset, length, batch_bufs.back()->data() + shift});
      }
    }
  }
  // The same ranges as one batch.
  Status s = b->ReadBatch(batch);
  ASSERT_OK(s);
  for (const ReadRequest& r : batch)
    ASSERT_EQ(std::memcmp(r.dest, file.data() + r.offset, r.length), 0) << "batch offset " << r.offset;
}

TEST_P(IoBackendTest, ReadsAcrossHolesOfSparseFile) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string path = dir_.File("sparse.bin");
  constexpr size_t kSize = 8 * 1024 * 1024;
  std::string reference(kSize, '\0');
  WriteFileBytes(path, "");
  Truncate(path, kSize);
  {
    auto w = Open(path, /*writable=*/true);
    ASSERT_NE(w, nullptr);
    for (uint64_t at : {uint64_t{2 * 1024 * 1024 + 100}, uint64_t{5 * 1024 * 1024}}) {
      const std::string data = RandomBytes(5000, rng);
      ASSERT_OK(w->Write(at, data));
      reference.replace(at, data.size(), data);
    }
    ASSERT_OK(w->Sync());
  }
  auto b = Open(path);
  ASSERT_NE(b, nullptr);
  AlignedBuffer buf(256 * 1024 + kPage);
  const struct {
    uint64_t offset;
    size_t length;
    size_t shift;
  } cases[] = {
      {1, 100, 0},                              // hole, misaligned
      {kPage, kPage, 0},                        // hole, aligned
      {3 * kPage + 5, 3 * kPage, 3},            // hole, all misaligned
      {2 * 1024 * 1024 - 77, 6000, 1},          // hole into data into hole
      {2 * 1024 * 1024, 2 * kPage, 0},          // aligned over data
      {5 * 1024 * 1024 - kPage, 3 * kPage, 0},  // aligned, hole then data
      {5 * 1024 * 1024 + 1, 4999, 17},          // inside data
      {kSize - 10, 10, 5},                      // end of file
      {0, 256 * 1024, 0},                       // a long aligned hole
  };
  for (const auto& c : cases) {
    char* dest = buf.data() + c.shift;
    std::memset(dest, 0x5a, c.length);  // a hole must overwrite this with zeros
    Status s = b->Read(c.offset, c.length, dest);
    ASSERT_OK(s);
    EXPECT_EQ(std::memcmp(dest, reference.data() + c.offset, c.length), 0)
        << "offset " << c.offset << " length " << c.length;
  }
}

TEST_P(IoBackendTest, ReadPastEndIsAnErrorNamingTheFile) {
  const std::string path = dir_.File("ten_thousand.bin");
  WriteSynced(path, std::string(10000, 'q'));
  auto b = Open(path);
  ASSERT_NE(b, nullptr);
  AlignedBuffer buf(3 * kPage);
  for (auto [offset, length] : {std::pair<uint64_t, size_t>{9000, 2000},
                                {8192, 4096},  // aligned: the O_DIRECT read comes back short
                                {10000, 1},
                                {20000, 10},
                                {uint64_t{1} << 50, 4096}}) {
    Status s = b->Read(offset, length, buf.data());
    ASSERT_FALSE(s.ok()) << "offset " << offset;
    EXPECT_EQ(s.code(), Status::Code::kIOError);
    EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("past end of file"), std::string::npos) << s.ToString();
  }
  // A batch with one bad request fails; the backend stays usable afterwards.
  std::vector<AlignedBuffer> bufs;
  std::vector<ReadRequest> batch;
  for (int i = 0; i < 20; ++i) bufs.emplace_back(kPage);
  for (int i = 0; i < 20; ++i)
    batch.push_back({i == 7 ? uint64_t{9999} : uint64_t(i % 2) * kPage, i == 7 ? 2 : kPage, bufs[i].data()});
  EXPECT_FALSE(b->ReadBatch(batch).ok());
  EXPECT_EQ(ReadString(*b, 9990, 10), std::string(10, 'q'));
  batch[7].offset = 0;
  batch[7].length = kPage;
  EXPECT_OK(b->ReadBatch(batch));
}

TEST_P(IoBackendTest, FileTruncatedAfterOpenIsAnErrorNotACrash) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string path = dir_.File("shrinks.bin");
  const std::string file = RandomBytes(1024 * 1024, rng);
  WriteSynced(path, file);
  auto b = Open(path);
  ASSERT_NE(b, nullptr);
  AlignedBuffer buf(64 * 1024);
  ASSERT_OK(b->Read(512 * 1024, 64 * 1024, buf.data()));  // pages now mapped / cached

  Truncate(path, 2 * kPage + 100);  // another process shrinks the file
  for (auto [offset, length] :
       {std::pair<uint64_t, size_t>{512 * 1024, 64 * 1024}, {512 * 1024 + 1, 1000}, {8 * kPage, kPage}}) {
    Status s = b->Read(offset, length, buf.data());
    ASSERT_FALSE(s.ok()) << "offset " << offset;
    EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("shrank"), std::string::npos) << s.ToString();
  }
  // What is left still reads.
  EXPECT_EQ(ReadString(*b, 0, 2 * kPage + 100), file.substr(0, 2 * kPage + 100));
  EXPECT_EQ(b->Size().value(), 2 * kPage + 100);
}

TEST_P(IoBackendTest, SizeFollowsTheFile) {
  const std::string path = dir_.File("size.bin");
  WriteFileBytes(path, std::string(12345, 's'));
  auto b = Open(path, /*writable=*/true);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->Size().value(), 12345u);
  ASSERT_OK(b->Write(20000, std::string(5, 't')));
  EXPECT_EQ(b->Size().value(), 20005u);
  // Growth by someone else shows up, and the new bytes read.
  {
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "uvw", 3), 3);
    ::close(fd);
  }
  EXPECT_EQ(b->Size().value(), 20008u);
  EXPECT_EQ(ReadString(*b, 20000, 8), "tttttuvw");
}

TEST_P(IoBackendTest, AllocateReservesBlocksInsideTheFile) {
  const std::string path = dir_.File("alloc.bin");
  constexpr size_t kSize = 4 * 1024 * 1024;
  WriteFileBytes(path, "");
  Truncate(path, kSize);
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  auto b = Open(path, /*writable=*/true);
  ASSERT_NE(b, nullptr);
  ASSERT_OK(b->Allocate(0, kSize));
  EXPECT_EQ(b->Size().value(), kSize);  // inside the file: size unchanged
  ASSERT_OK(b->Allocate(0, 0));
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  // Blocks are only checked where the file system has fallocate (ext4, xfs,
  // btrfs and tmpfs do); elsewhere Allocate is OK without effect.
  const std::string probe = dir_.File("fallocate-probe");
  WriteFileBytes(probe, "");
  const int fd = ::open(probe.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const bool have_fallocate = ::fallocate(fd, 0, 0, kPage) == 0;
  ::close(fd);
  if (have_fallocate) {
    EXPECT_LT(before.st_blocks * 512, 4096);
    EXPECT_GE(static_cast<uint64_t>(after.st_blocks) * 512, kSize);
  }
  EXPECT_EQ(ReadString(*b, kSize / 2 + 3, 1000), std::string(1000, '\0'));
}

TEST_P(IoBackendTest, MissingFileNamesThePath) {
  const std::string path = dir_.File("no-such-file.npy");
  auto b = OpenIoBackend(path, Options(false, 8));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kIOError);
  EXPECT_NE(b.status().ToString().find(path), std::string::npos) << b.status().ToString();
  EXPECT_NE(b.status().ToString().find("No such file"), std::string::npos) << b.status().ToString();
}

TEST_P(IoBackendTest, ShortFile) {
  const std::string path = dir_.File("short.bin");
  WriteFileBytes(path, "0123456789");
  auto b = Open(path);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(ReadString(*b, 0, 10), "0123456789");
  EXPECT_EQ(ReadString(*b, 5, 5), "56789");
  EXPECT_OK(b->Read(10, 0, nullptr));  // an empty range reads nothing, anywhere
  EXPECT_OK(b->Read(100, 0, nullptr));
  char buf[16];
  Status s = b->Read(0, 11, buf);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  EXPECT_EQ(b->Size().value(), 10u);
}

TEST_P(IoBackendTest, EmptyFileThenWritten) {
  const std::string path = dir_.File("empty.bin");
  WriteFileBytes(path, "");
  auto b = Open(path, /*writable=*/true);  // mmap: nothing to map yet
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->Size().value(), 0u);
  EXPECT_OK(b->Read(0, 0, nullptr));
  char c;
  EXPECT_FALSE(b->Read(0, 1, &c).ok());
  ASSERT_OK(b->Write(0, std::string("abc")));
  EXPECT_EQ(ReadString(*b, 0, 3), "abc");
}

TEST_P(IoBackendTest, DirectReadsSeeUnsyncedBufferedWrites) {
  // io_uring reads aligned ranges with O_DIRECT and writes through the page
  // cache; the kernel writes dirty pages back before a direct read.
  const uint64_t seed = TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string path = dir_.File("coherent.bin");
  std::string file = RandomBytes(1024 * 1024, rng);
  WriteSynced(path, file);
  auto b = Open(path, /*writable=*/true);
  ASSERT_NE(b, nullptr);
  AlignedBuffer buf(64 * 1024);
  for (int round = 0; round < 3; ++round) {
    const std::string patch = RandomBytes(1000 + round, rng);
    const uint64_t at = 64 * 1024 + 100 + round * 3000;
    ASSERT_OK(b->Write(at, patch));  // dirty in the page cache, no Sync
    file.replace(at, patch.size(), patch);
    ASSERT_OK(b->Read(64 * 1024, 64 * 1024, buf.data()));  // aligned: O_DIRECT
    ASSERT_EQ(std::memcmp(buf.data(), file.data() + 64 * 1024, 64 * 1024), 0) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, IoBackendTest,
                         ::testing::Values(BackendParam{"pread", IoKind::kPread, true},
                                           BackendParam{"mmap", IoKind::kMmap, true},
                                           BackendParam{"uring", IoKind::kUring, true},
                                           BackendParam{"uring_buffered", IoKind::kUring, false}),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- the premise of the misaligned-read tests ------------------------------

TEST(IoBackendPremiseTest, MisalignedDirectReadFailsOnWrittenBlocksOnly) {
  ScratchDir dir;
  const std::string path = dir.File("premise.bin");
  WriteSynced(path, std::string(64 * 1024, 'w'));
  Truncate(path, 1024 * 1024);  // [64 KiB, 1 MiB) is a hole
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "file system refuses O_DIRECT: " << std::strerror(errno);
  AlignedBuffer buf(2 * kPage);
  errno = 0;
  EXPECT_EQ(::pread(fd, buf.data() + 1, 100, 1), -1) << "written block, misaligned";
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(::pread(fd, buf.data(), kPage, 0), static_cast<ssize_t>(kPage)) << "written, aligned";
  ::close(fd);
}

// The mmap backend's SIGBUS handler must only swallow faults of its own
// guarded copies: any other SIGBUS still kills the process as before.
TEST(IoBackendSigbusTest, FaultsOutsideGuardedReadsStillKill) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer handles SIGBUS itself (it reports and exits 1), so the death by SIGBUS this "
                  "test expects cannot be seen under it";
#endif
  ScratchDir dir;
  const std::string path = dir.File("victim.bin");
  WriteSynced(path, std::string(4 * kPage, 'v'));
  IoOptions options;
  options.kind = IoKind::kMmap;
  EXPECT_EXIT(
      {
        auto b = OpenIoBackend(path, options);  // installs the handler
        if (!b.ok()) std::_Exit(1);
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        void* p = ::mmap(nullptr, 4 * kPage, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED || ::ftruncate(fd, 0) != 0) std::_Exit(2);
        volatile char c = static_cast<const char*>(p)[2 * kPage];  // not a guarded copy
        (void)c;
        std::_Exit(3);
      },
      ::testing::KilledBySignal(SIGBUS), "");
  EXPECT_EXIT(
      {
        auto b = OpenIoBackend(path, options);
        if (!b.ok()) std::_Exit(1);
        ::raise(SIGBUS);  // sent, not a fault
        std::_Exit(3);
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

// ---- fallback when the kernel refuses io_uring -----------------------------

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;  // the tests below skip
#endif

// Makes io_uring_setup fail with EPERM in this process, as a container's
// seccomp profile does. Irreversible: call it only in a forked child.
bool RefuseIoUringSetup() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// Runs `body` in a forked child under RefuseIoUringSetup and returns its exit
// code (0 = every check passed; the child explains other codes on stderr).
int RunWithoutIoUring(const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!RefuseIoUringSetup()) {
      std::fprintf(stderr, "child: cannot install seccomp filter: %s\n", std::strerror(errno));
      ::_exit(100);
    }
    ::_exit(body());
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(status)) return 200 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

class IoBackendFallbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kAuditArch == 0) GTEST_SKIP() << "no seccomp arch constant for this CPU";
    WriteSynced(path_, std::string(10000, 'f'));
  }
  ScratchDir dir_;
  const std::string path_ = dir_.File("fallback.bin");
};

TEST_F(IoBackendFallbackTest, AutoFallsBackToPreadAndSaysWhy) {
  const int code = RunWithoutIoUring([this]() -> int {
    IoOptions options;
    options.kind = IoKind::kAuto;
    std::string notice;
    auto b = OpenIoBackend(path_, options, &notice);
    std::fprintf(stderr, "child: notice \"%s\"\n", notice.c_str());
    if (!b.ok()) {
      std::fprintf(stderr, "child: open failed: %s\n", b.status().ToString().c_str());
      return 1;
    }
    if (notice.find("io_uring") == std::string::npos) return 2;
    if (notice.find("pread") == std::string::npos) return 3;
    if ((*b)->Name() != "pread") return 4;
    std::string out(10000, '\0');
    if (!(*b)->Read(0, out.size(), out.data()).ok() || out != std::string(10000, 'f')) return 5;
    return 0;
  });
  EXPECT_EQ(code, 0) << "1 open failed, 2 notice lacks io_uring, 3 notice lacks the fallback, "
                        "4 wrong backend, 5 read failed, 100 no seccomp, 200+N killed by signal N";
}

TEST_F(IoBackendFallbackTest, NamedUringIsNotSupportedNotACrash) {
  const int code = RunWithoutIoUring([this]() -> int {
    IoOptions options;
    options.kind = IoKind::kUring;
    auto b = OpenIoBackend(path_, options);
    if (b.ok()) return 1;
    std::fprintf(stderr, "child: %s\n", b.status().ToString().c_str());
    if (b.status().code() != Status::Code::kNotSupported) return 2;
    if (b.status().ToString().find("io_uring") == std::string::npos) return 3;
    return 0;
  });
  EXPECT_EQ(code, 0) << "1 opened anyway, 2 not NotSupported, 3 message lacks io_uring, "
                        "100 no seccomp, 200+N killed by signal N";
}

TEST_F(IoBackendFallbackTest, AutoUsesIoUringWhenTheKernelAllowsIt) {
  IoOptions uring;
  uring.kind = IoKind::kUring;
  auto probe = OpenIoBackend(path_, uring);
  if (!probe.ok()) GTEST_SKIP() << probe.status().ToString();
  IoOptions options;
  std::string notice;
  auto b = OpenIoBackend(path_, options, &notice);
  ASSERT_OK(b);
  EXPECT_EQ((*b)->Name().rfind("io_uring", 0), 0u) << (*b)->Name();
  EXPECT_EQ(notice, "");
}

}  // namespace
}  // namespace momenta
