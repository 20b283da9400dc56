// Crash safety: a child applies a stream of updates under --sync always and is
// killed with SIGKILL at random points (200 kills). After each kill: a reader
// opened while the child ran, and one opened after, answer within a bounded
// time (a reader never waits on a dead writer; the second one's answer is the
// replay of the whole log); then the array reopens as a writer and: every
// update the child saw acknowledged is in the log and the array, the array
// equals the replay of the whole log over zeros, and the buffer verifies
// against the array.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 4096;

// Update number u (1, 2, ...) sets element (u * 7919) % kLength to u.
IndexedValue UpdateNumber(uint64_t u) { return {(u * 7919) % kLength, Value::Float(static_cast<double>(u))}; }

BufferedArrayOptions Options() {
  BufferedArrayOptions o;
  o.io.writable = true;
  o.io.kind = IoKind::kPread;
  o.sync = LogSync::kAlways;
  o.tree.leaf_span = 64;  // several levels over 4096 elements
  o.tree.fanout = 4;
  o.tree.ram_budget = 1024;
  o.log_segment_bytes = 16 << 10;  // rotate often: kills land mid-rotation too
  return o;
}

// The child: applies updates first, first+1, ... in batches of 1..20, writing
// the number of the last acknowledged update to `ack_fd` after each batch.
[[noreturn]] void RunWriter(const std::string& path, uint64_t first, int ack_fd, uint64_t seed) {
  auto ba = BufferedArray::Open(path, Options());
  if (!ba.ok()) _exit(3);
  std::mt19937_64 rng(seed);
  uint64_t u = first;
  std::vector<IndexedValue> batch;
  while (true) {
    batch.clear();
    const int n = 1 + static_cast<int>(rng() % 20);
    for (int k = 0; k < n; ++k) batch.push_back(UpdateNumber(u + k));
    if (!(*ba)->Apply(batch).ok()) _exit(4);
    u += n;
    const uint64_t acked = u - 1;
    if (write(ack_fd, &acked, sizeof acked) != sizeof acked) _exit(5);
  }
}

BufferedArrayOptions ReaderOptions() {
  BufferedArrayOptions o = Options();
  o.io.writable = false;
  return o;
}

// The sum of the whole array as a reader sees it, or fails the test (and
// ends the process) if the reader does not answer within 20 s.
double BoundedReaderSum(BufferedArray& reader) {
  auto answer = std::async(std::launch::async, [&] { return reader.Summarize(0, kLength, false); });
  if (answer.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "a reader waited more than 20 s after the writer was killed";
    std::fflush(nullptr);
    std::_Exit(1);  // the stuck thread cannot be joined
  }
  auto s = answer.get();
  EXPECT_OK(s);
  return s.ok() ? static_cast<double>(s->index.moment(0)) : -1;
}

TEST(WriterCrashTest, TwoHundredKillsLoseNothingAcknowledged) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kLength};
    ASSERT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
  }
  uint64_t acknowledged = 0;  // highest update number any child saw acknowledged
  uint64_t next = 1;          // the next child starts here
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE("kill " + std::to_string(round));
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      RunWriter(path, next, fds[1], rng());
    }
    close(fds[1]);
    // Let it run for a random while (sometimes not even through its open).
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 15000));
    // A reader that opens while the writer runs (it may be building the buffer
    // still: then the reader waits for it, a live writer).
    std::unique_ptr<BufferedArray> early;
    if (round % 2 == 1) {
      auto r = BufferedArray::Open(path, ReaderOptions());
      if (r.ok()) early = std::move(r).value();
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "child exited on its own with " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    uint64_t acked;
    while (read(fds[0], &acked, sizeof acked) == sizeof acked) acknowledged = std::max(acknowledged, acked);
    close(fds[0]);

    // Queries after the kill answer within a bounded time.
    if (early) (void)BoundedReaderSum(*early);
    double reader_sum = -1;
    {
      auto r = std::async(std::launch::async, [&] { return BufferedArray::Open(path, ReaderOptions()); });
      if (r.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
        ADD_FAILURE() << "a reader's open waited more than 20 s after the writer was killed";
        std::fflush(nullptr);
        std::_Exit(1);
      }
      auto reader = r.get();
      ASSERT_OK(reader);
      reader_sum = BoundedReaderSum(**reader);
    }
    early.reset();

    // Reopen as the next writer would: recovery runs.
    std::vector<std::string> notices;
    auto ba = BufferedArray::Open(path, Options(), &notices);
    ASSERT_OK(ba);
    // The array equals the replay of the whole log over zeros, and every
    // acknowledged update is in the log.
    std::vector<double> replay(kLength, 0.0);
    uint64_t records = 0, last_update = 0;
    {
      auto reader = LogReader::Open(LogDirPath(path));
      if (reader.ok()) {
        LogRecord r;
        while (true) {
          auto more = (*reader)->Next(&r);
          ASSERT_OK(more);
          if (!*more) break;
          ++records;
          ASSERT_EQ(r.sequence, records) << "sequences must be dense";
          double v;
          std::memcpy(&v, &r.new_raw, 8);
          replay[r.index] = v;
          last_update = static_cast<uint64_t>(v);
        }
        EXPECT_TRUE((*reader)->damage().empty()) << (*reader)->damage().front().ToString();
      } else {
        ASSERT_EQ(reader.status().code(), Status::Code::kNotFound);
      }
    }
    EXPECT_GE(last_update, acknowledged) << "an acknowledged update is missing from the log";
    EXPECT_EQ(records, last_update) << "one record per update, in order";
    std::vector<double> array(kLength);
    ASSERT_OK((*ba)->array().ReadDoubles(0, kLength, array.data()));
    for (uint64_t i = 0; i < kLength; ++i) ASSERT_EQ(array[i], replay[i]) << "element " << i;
    long double replay_sum = 0;
    for (double v : replay) replay_sum += v;
    EXPECT_NEAR(reader_sum, static_cast<double>(replay_sum), 1e-9 * static_cast<double>(replay_sum) + 1e-9)
        << "the reader after the kill answered for another state than the log's";
    EXPECT_EQ((*ba)->applied_sequence(), records);
    auto report = (*ba)->Verify();
    ASSERT_OK(report);
    ASSERT_EQ(report->mismatches, 0u) << report->examples.front();
    next = last_update + 1;
    if (::testing::Test::HasFatalFailure()) return;
  }
  RecordProperty("updates", static_cast<int>(next - 1));
  std::printf("crash test: 200 kills, %llu updates applied\n", static_cast<unsigned long long>(next - 1));
}

}  // namespace
}  // namespace momenta
