// ReadLog: while installed on a thread, the io_uring backend logs every read
// it submits (path, offset, length, O_DIRECT or not) and numbers each batch
// as one round; nothing is logged without one.
#include "storage/io/read_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "storage/io/io_backend.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

Result<std::unique_ptr<IoBackend>> OpenUring(const std::string& path) {
  IoOptions o;
  o.kind = IoKind::kUring;
  o.queue_depth = 4;  // fewer than the requests: refills are logged too
  return OpenIoBackend(path, o);
}

using Key = std::tuple<std::string, uint64_t, size_t>;

TEST(ReadLogTest, LogsEverySubmittedReadAndItsRound) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  std::string a(1 << 20, '\0'), b(1 << 18, '\0');
  for (char& c : a) c = static_cast<char>(rng());
  for (char& c : b) c = static_cast<char>(rng());
  testing::WriteFileBytes(dir.File("a"), a);
  testing::WriteFileBytes(dir.File("b"), b);
  auto fa = OpenUring(dir.File("a"));
  auto fb = OpenUring(dir.File("b"));
  if (!fa.ok() || !fb.ok()) GTEST_SKIP() << (fa.ok() ? fb.status() : fa.status()).ToString();

  std::vector<std::string> bufs;
  bufs.reserve(20);
  std::vector<ReadRequest> ra, rb;
  std::vector<Key> want;
  for (int k = 0; k < 10; ++k) {
    for (int side = 0; side < 2; ++side) {
      const std::string& src = side ? b : a;
      const size_t len = 1 + rng() % 9000;
      const uint64_t off = rng() % (src.size() - len);
      bufs.emplace_back(len, '\0');
      (side ? rb : ra).push_back({off, len, bufs.back().data()});
      want.emplace_back(dir.File(side ? "b" : "a"), off, len);
    }
  }
  ASSERT_OK((*fa)->ReadBatch(ra));  // not logged: no log installed
  EXPECT_EQ(ReadLog::Current(), nullptr);
  {
    ReadLog log;
    ASSERT_EQ(ReadLog::Current(), &log);
    ASSERT_OK((*fa)->ReadBatchWith(ra, **fb, rb));
    std::vector<Key> got;
    for (const LoggedRead& r : log.reads()) {
      got.emplace_back(r.path, r.offset, r.length);
      EXPECT_FALSE(r.direct) << "short reads go through the page cache";
      EXPECT_EQ(r.round, log.reads()[0].round) << "one batch, one round";
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(log.rounds(), 1u);
    {
      ReadLog inner;  // nesting: the inner log takes the reads, then the outer is back
      ASSERT_OK((*fb)->Read(0, 100, bufs[0].data()));
      EXPECT_EQ(inner.reads().size(), 1u);
    }
    EXPECT_EQ(ReadLog::Current(), &log);
    ASSERT_OK((*fb)->Read(0, 100, bufs[0].data()));
    EXPECT_EQ(log.rounds(), 2u) << "a second batch is a second round";
    EXPECT_EQ(log.reads().size(), want.size() + 1);
  }
  EXPECT_EQ(ReadLog::Current(), nullptr);
}

// A batch no deeper than the window is waited for in one enter: the reads of
// a cold query come back together, one sleep and one wakeup, not one enter
// per completion. The reads miss the page cache (dropped after a sync) so
// they complete at the device's pace rather than at submission.
TEST(ReadLogTest, ColdBatchWithinTheWindowIsOneWait) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  std::string data(8 << 20, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  testing::WriteFileBytes(dir.File("cold"), data);
  IoOptions o;
  o.kind = IoKind::kUring;
  o.queue_depth = 32;
  auto file = OpenIoBackend(dir.File("cold"), o);
  if (!file.ok()) GTEST_SKIP() << file.status().ToString();
  for (int rep = 0; rep < 5; ++rep) {
    const int fd = ::open(dir.File("cold").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::fdatasync(fd), 0);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    std::vector<std::string> bufs(8, std::string(16 << 10, '\0'));
    std::vector<ReadRequest> requests;
    for (size_t k = 0; k < bufs.size(); ++k) {
      const uint64_t off = (k * (1 << 20) + (rng() % 64) * 4096) % (data.size() - bufs[k].size());
      requests.push_back({off, bufs[k].size(), bufs[k].data()});
    }
    ReadLog log;
    ASSERT_OK((*file)->ReadBatch(requests));
    for (const ReadRequest& r : requests) ASSERT_EQ(std::string(r.dest, r.length), data.substr(r.offset, r.length));
    EXPECT_EQ(log.reads().size(), requests.size()) << "a short read was resubmitted: the count below allows for it";
    EXPECT_EQ(log.waits(), 1 + (log.reads().size() - requests.size())) << "repetition " << rep;
  }
}

}  // namespace
}  // namespace momenta
