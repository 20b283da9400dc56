// A writer's recovery replays logged records into the array and the buffer
// in place, while readers that opened the array before may be querying. It
// must hold the buffer's seqlock as a chunk of updates does: found by
// bench/kill_driver, where a writer killed between its log append
// and its first store left records for the next writer's open to replay, and
// a reader querying meanwhile answered a sum that matched no log sequence, or
// took a node whose check was not yet resealed for damage.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/tree_file.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = uint64_t{1} << 18;

BufferedArrayOptions Options(bool writable) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.tree.leaf_span = 64;
  o.tree.fanout = 4;
  o.tree.ram_budget = 4096;
  return o;
}

TEST(RecoverySeqlockTest, ReadersNeverSeeAHalfReplayedBuffer) {
  const uint64_t seed = testing::TestSeed();
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  std::string tree_path;
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kLength};
    ASSERT_OK(ArrayFile::Create(path, DType::kI8, shape, io));
    auto ba = BufferedArray::Open(path, Options(true));
    ASSERT_OK(ba);
    tree_path = (*ba)->tree_path();
    ASSERT_OK((*ba)->Close());
  }
  // A reader opens the clean buffer, as one that was querying all along.
  auto reader = BufferedArray::Open(path, Options(false));
  ASSERT_OK(reader);
  // Then a writer dies after logging record k: a[k - 1] = 1 for k = 1..kLength,
  // before any store: the buffer says "updating" at sequence 0.
  {
    auto tree = MomentTree::Open(tree_path, /*writable=*/true, IoOptions{});
    ASSERT_OK(tree);
    (*tree)->header().state = kTreeUpdating;
    ASSERT_OK((*tree)->FlushHeader());
    LogWriterOptions lo;
    lo.dtype = DType::kI8;
    lo.sync = LogSync::kNone;
    auto log = LogWriter::Open(LogDirPath(path), lo);
    ASSERT_OK(log);
    std::vector<LogRecord> frame;
    for (uint64_t k = 1; k <= kLength; ++k) {
      LogRecord r;
      r.time = 1;
      r.index = k - 1;
      const int64_t one = 1;
      std::memcpy(&r.new_raw, &one, 8);
      frame.push_back(r);
      if (frame.size() == 4096) {
        ASSERT_OK((*log)->Append(frame));
        frame.clear();
      }
    }
    ASSERT_OK((*log)->Close());
  }
  // The next writer's open replays them, in another process, while the
  // reader queries: each answer must be the exact sum at its log sequence s,
  // |[p, q) ∩ [0, s)|.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto w = BufferedArray::Open(path, Options(true));
    _exit(w.ok() && (*w)->open_report().replayed == kLength ? 0 : 1);
  }
  std::mt19937_64 rng(seed);
  uint64_t answers = 0, wrong = 0, errors = 0;
  std::string first_problem;
  int status = 0;
  for (int after = 0; after < 3;) {
    if (after > 0 || waitpid(pid, &status, WNOHANG) == pid) ++after;
    const uint64_t p = rng() % kLength, q = p + rng() % (kLength - p + 1);
    uint64_t as_of = 0;
    auto s = (*reader)->Summarize(p, q, false, nullptr, &as_of);
    if (!s.ok()) {
      if (errors++ == 0) first_problem = s.status().ToString();
      continue;
    }
    ++answers;
    const int64_t exact = static_cast<int64_t>(std::min(q, as_of) - std::min(p, as_of));
    if (static_cast<int64_t>(s->exact_sum) != exact && wrong++ == 0)
      first_problem = "sum over " + std::to_string(p) + ":" + std::to_string(q) + " as of " + std::to_string(as_of) +
                      " is " + std::to_string(static_cast<int64_t>(s->exact_sum)) + ", exact " + std::to_string(exact);
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the recovering writer failed";
  EXPECT_EQ(wrong, 0u) << first_problem << " (seed " << seed << ")";
  EXPECT_EQ(errors, 0u) << first_problem << " (seed " << seed << ")";
  EXPECT_GT(answers, 0u);
}

}  // namespace
}  // namespace momenta
