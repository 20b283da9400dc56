// A cold query is one device round: every read a single query makes (its
// end pieces from the array, its disk-tier nodes from the tree) goes to the
// io_uring backend as one batch, seen through a ReadLog, with no read after
// it (the fallback read when a subtraction would lose the variance is the
// one exception, and normal data never needs it), and waited for in one
// io_uring_enter.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <random>
#include <set>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "storage/io/read_log.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 1 << 20;  // f8: 8 MiB

void DropPages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

TEST(ColdQueryRoundsTest, EveryReadOfAQueryIsOneBatch) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kLength};
    auto array = ArrayFile::Create(path, DType::kF8, shape, io);
    ASSERT_OK(array);
    std::mt19937_64 rng(seed);
    std::vector<Value> v(kLength);
    for (auto& x : v) x = Value::Float(std::normal_distribution<double>(3.0, 50.0)(rng));
    ASSERT_OK((*array)->WriteValues(0, v));
  }
  BufferedArrayOptions build;
  build.io.writable = true;
  build.tree.leaf_span = 1024;
  build.tree.fanout = 8;
  build.tree.ram_budget = 4096;  // most levels in the disk tier
  ASSERT_OK(BufferedArray::Open(path, build));
  BufferedArrayOptions options;
  options.io.kind = IoKind::kUring;
  auto ba = BufferedArray::Open(path, options);
  if (!ba.ok()) GTEST_SKIP() << "no io_uring here: " << ba.status().ToString();
  const std::string tree = TreeOf(**ba).path();

  std::mt19937_64 rng(seed + 1);
  int both_files = 0;
  uint64_t waits = 0, rounds = 0;
  for (int k = 0; k < 200; ++k) {
    uint64_t p = rng() % kLength, q = rng() % kLength;
    if (p > q) std::swap(p, q);
    SCOPED_TRACE("range " + std::to_string(p) + ":" + std::to_string(q));
    DropPages(path);
    DropPages(tree);
    ReadLog log;
    ASSERT_OK((*ba)->Summarize(p, q, false));
    EXPECT_LE(log.rounds(), 1u) << "a read after the query's batch is a second device round";
    waits += log.waits();
    rounds += log.rounds();
    std::set<std::string> files;
    for (const LoggedRead& r : log.reads()) files.insert(r.path);
    both_files += files.size() == 2;
  }
  // One enter per round (a batch within the window is waited for whole);
  // a short read resubmitted would add one, which a cold local file does not do.
  EXPECT_EQ(waits, rounds);
  EXPECT_GT(both_files, 0) << "no query read end pieces and disk-tier nodes together: the test proves nothing";
}

}  // namespace
}  // namespace momenta
