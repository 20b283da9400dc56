// A reader in one process queries while a writer in another applies updates.
// Guarantee (buffers/buffered_array.h): every answer equals the exact answer
// for the array after some log sequence s, with s_start <= s <= s_end — the
// sequences applied when the query began and ended. Summarize reports s.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "tests/assert_ok.h"
#include "tests/buffers/update_model.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::SumAfter;
constexpr uint64_t kLength = testing::kUpdateModelLength;

// A writer process applying updates 1, 2, ... in batches until the object
// goes (it kills the process).
class WriterProcess {
 public:
  WriterProcess(const std::string& path, const BufferedArrayOptions& options) {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {  // the writer: updates in batches until killed
      auto ba = BufferedArray::Open(path, options);
      if (!ba.ok()) _exit(3);
      char c = 1;
      if (write(ready[1], &c, 1) != 1) _exit(4);
      for (uint64_t u = 1;; u += 2000)
        if (!(*ba)->Apply(testing::UpdateBatch(u, 2000)).ok()) _exit(5);
    }
    char c;
    started_ = pid_ > 0 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    close(ready[1]);
  }
  ~WriterProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return started_; }

 private:
  pid_t pid_ = -1;
  bool started_ = false;
};

// An array of kLength f8 zeros with a built buffer of small leaves; returns
// the writer's options.
// `ola_nodes` > 0: the buffer kind ola (an Ola buffer of that many nodes, bin 8).
BufferedArrayOptions MakeArray(const std::string& path, int ola_nodes = 0) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  EXPECT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
  BufferedArrayOptions writer_options = testing::UpdateModelWriterOptions();
  writer_options.tree.ola_nodes = ola_nodes;
  writer_options.tree.ola_bin = 8;
  EXPECT_OK(BufferedArray::Open(path, writer_options));  // builds the buffer before the race starts
  return writer_options;
}

// For 3 s: a random range answered by `answer` (its sum and the log sequence
// it is as of), which must lie between the sequences applied before and
// after, with the sum the update model gives then, within `tolerance` of the
// whole array's sum (0: exactly).
void CheckAnswersDuringWrites(BufferedArray& reader, std::mt19937_64& rng, const char* what,
                              const std::function<Result<long double>(uint64_t, uint64_t, uint64_t*)>& answer,
                              long double tolerance) {
  int checked = 0, moved = 0;
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < stop) {
    uint64_t p = rng() % kLength, q = rng() % (kLength + 1);
    if (p > q) std::swap(p, q);
    const uint64_t start = reader.applied_sequence();
    uint64_t as_of = 0;
    auto sum = answer(p, q, &as_of);
    const uint64_t end = reader.applied_sequence();
    ASSERT_OK(sum);
    EXPECT_LE(start, as_of);
    EXPECT_LE(as_of, end);
    EXPECT_LE(std::fabs(*sum - SumAfter(as_of, p, q)), tolerance * SumAfter(as_of, 0, kLength))
        << "range " << p << ":" << q << " as of " << as_of;
    ++checked;
    moved += end > start;
    if (::testing::Test::HasFailure()) break;
  }
  std::printf("concurrency (%s): %d answers checked, %d while the writer moved\n", what, checked, moved);
  EXPECT_GT(checked, 0);  // on a loaded machine a reader may get few turns; each one is checked
}

TEST(ConcurrentReaderTest, ReaderAnswersMatchSomeSequenceDuringTheQuery) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  WriterProcess writer(path, MakeArray(path));
  ASSERT_TRUE(writer.started());
  BufferedArrayOptions reader_options;  // not writable: a reader beside a live writer
  auto reader = BufferedArray::Open(path, reader_options);
  ASSERT_OK(reader);
  CheckAnswersDuringWrites(
      **reader, rng, "hbb",
      [&](uint64_t p, uint64_t q, uint64_t* as_of) -> Result<long double> {
        auto s = (*reader)->Summarize(p, q, /*need_extremes=*/false, nullptr, as_of);
        if (!s.ok()) return s.status();
        return Sum(s->index);
      },
      0);
}

// The same guarantee for the Ola buffer's answers (kind ola): its slots change
// inside the writer's chunks, under the tree's seqlock. Values are update
// numbers (positive), so the whole array's sum bounds the Ola bound's magnitude.
TEST(ConcurrentReaderTest, OlaReaderAnswersMatchSomeSequenceDuringTheQuery) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  WriterProcess writer(path, MakeArray(path, /*ola_nodes=*/4));
  ASSERT_TRUE(writer.started());
  auto reader = BufferedArray::Open(path, BufferedArrayOptions{});
  ASSERT_OK(reader);
  ASSERT_NE(OlaOf(**reader), nullptr);
  CheckAnswersDuringWrites(
      **reader, rng, "ola",
      [&](uint64_t p, uint64_t q, uint64_t* as_of) -> Result<long double> {
        auto m = (*reader)->SummarizeIndex(p, q, as_of);
        if (!m.ok()) return m.status();
        return m->moment(0);
      },
      1e-9L);
}

// Two threads share one read-only handle, each asking batches of ranges
// (SummarizeBatch) and single ranges while the writer runs: every answer
// keeps the same guarantee, per range of a batch.
TEST(ConcurrentReaderTest, ThreadsSharingOneReaderEachGetConsistentAnswers) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  WriterProcess writer(path, MakeArray(path));
  ASSERT_TRUE(writer.started());
  auto reader = BufferedArray::Open(path, BufferedArrayOptions{});
  ASSERT_OK(reader);
  std::atomic<int> checked{0}, failures{0};
  auto ask = [&](uint64_t thread_seed) {
    std::mt19937_64 rng(thread_seed);
    const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < stop && failures.load() == 0) {
      std::vector<IndexRange> ranges(1 + rng() % 8);
      for (IndexRange& r : ranges) {
        r = {rng() % kLength, rng() % (kLength + 1)};
        if (r.begin > r.end) std::swap(r.begin, r.end);
      }
      const uint64_t start = (*reader)->applied_sequence();
      std::vector<RangeSummary> out;
      std::vector<uint64_t> as_of;
      const Status s = ranges.size() == 1
                           ? Status::OK()
                           : (*reader)->SummarizeBatch(ranges, /*need_extremes=*/false, &out, nullptr, &as_of);
      if (ranges.size() == 1) {
        uint64_t one = 0;
        auto summary = (*reader)->Summarize(ranges[0].begin, ranges[0].end, false, nullptr, &one);
        if (!summary.ok()) {
          ADD_FAILURE() << summary.status().ToString();
          ++failures;
          return;
        }
        out = {*summary};
        as_of = {one};
      }
      const uint64_t end = (*reader)->applied_sequence();
      if (!s.ok()) {
        ADD_FAILURE() << s.ToString();
        ++failures;
        return;
      }
      for (size_t k = 0; k < ranges.size(); ++k) {
        const bool ok = start <= as_of[k] && as_of[k] <= end &&
                        Sum(out[k].index) == SumAfter(as_of[k], ranges[k].begin, ranges[k].end);
        if (!ok) {
          ADD_FAILURE() << "range " << ranges[k].begin << ":" << ranges[k].end << " as of " << as_of[k] << " outside ["
                        << start << ", " << end << "] or wrong";
          ++failures;
        }
        ++checked;
      }
    }
  };
  std::thread first(ask, seed), second(ask, seed + 1);
  first.join();
  second.join();
  std::printf("threads: %d answers checked\n", checked.load());
  EXPECT_GT(checked.load(), 0);
}

}  // namespace
}  // namespace momenta
