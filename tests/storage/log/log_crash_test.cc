// A writer process killed (SIGKILL) at random points, under each sync policy:
// after each kill the log reopens, its torn tail (if any) is cut, it holds
// sequences 1..N without a gap, and N covers every Append that returned.
// (A process crash loses nothing acknowledged under any policy: the kernel has
// the bytes. Machine crashes are what kBatch and kNone give up.)
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "storage/log/log_reader.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

LogRecord RecordFor(uint64_t sequence) {
  LogRecord r;
  r.index = sequence * 3;
  r.time = static_cast<int64_t>(sequence);
  r.new_raw = ~sequence;
  return r;
}

// The child: appends batches forever, reporting each acknowledged last sequence.
[[noreturn]] void AppendUntilKilled(const std::string& log, LogSync sync, int report_fd, uint64_t seed) {
  LogWriterOptions o;
  o.sync = sync;
  o.segment_bytes = 16 << 10;
  auto w = LogWriter::Open(log, o);
  if (!w.ok()) _exit(3);
  std::mt19937_64 rng(seed);
  for (;;) {
    const uint64_t first = (*w)->next_sequence();
    std::vector<LogRecord> batch(1 + rng() % 64);
    for (size_t k = 0; k < batch.size(); ++k) batch[k] = RecordFor(first + k);
    if (!(*w)->Append(batch).ok()) _exit(4);
    if (!(*w)->Commit().ok()) _exit(5);
    const uint64_t acked = first + batch.size() - 1;
    if (::write(report_fd, &acked, sizeof acked) != sizeof acked) _exit(6);
  }
}

TEST(LogCrashTest, KilledWritersLoseNothingAcknowledged) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED)");
  std::mt19937_64 rng(seed);
  int kills = 0, torn = 0;
  for (LogSync sync : {LogSync::kAlways, LogSync::kBatch, LogSync::kNone}) {
    SCOPED_TRACE(std::string(LogSyncName(sync)));
    ScratchDir dir;
    const std::string log = dir.File("log");
    uint64_t acked = 0;
    for (int round = 0; round < 70; ++round) {
      int fds[2];
      ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
      const uint64_t child_seed = rng();
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::close(fds[0]);
        AppendUntilKilled(log, sync, fds[1], child_seed);
      }
      ::close(fds[1]);
      // Collect acknowledgments until the kill time, then kill.
      const auto kill_at = std::chrono::steady_clock::now() +
                           std::chrono::microseconds(rng() % (sync == LogSync::kAlways ? 60000 : 15000));
      uint64_t value;
      for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        if (::read(fds[0], &value, sizeof value) != sizeof value) break;
        acked = std::max(acked, value);
      }
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
      while (::read(fds[0], &value, sizeof value) == sizeof value) acked = std::max(acked, value);
      ::close(fds[0]);
      ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
      ++kills;

      auto w = LogWriter::Open(log, LogWriterOptions{});
      ASSERT_OK(w);
      for (const LogDamage& d : (*w)->recovery().damage) {
        ASSERT_EQ(d.kind, LogDamage::Kind::kTornTail) << d.ToString();
        ++torn;
      }
      const uint64_t last = (*w)->next_sequence() - 1;
      ASSERT_GE(last, acked) << "an acknowledged record was lost";
      w->reset();
      auto reader = LogReader::Open(log);
      ASSERT_OK(reader);
      LogRecord r;
      uint64_t seen = 0;
      for (;;) {
        auto got = (*reader)->Next(&r);
        ASSERT_OK(got);
        if (!*got) break;
        ++seen;
        LogRecord want = RecordFor(seen);
        want.sequence = seen;
        ASSERT_EQ(r, want);
      }
      ASSERT_EQ(seen, last);
      ASSERT_TRUE((*reader)->damage().empty()) << (*reader)->damage().front().ToString();
    }
    std::printf("sync %s: %llu records acknowledged over 70 kills\n", std::string(LogSyncName(sync)).c_str(),
                static_cast<unsigned long long>(acked));
    EXPECT_GT(acked, 0u);
  }
  std::printf("%d kills, %d torn tails cut\n", kills, torn);
}

}  // namespace
}  // namespace momenta
