// Crash safety of `momenta update PATH --follow --ack` (tools/update_follow.h)
// as a process: the test feeds it update lines through a stdin pipe, reads its
// acknowledgments ("SEQ COUNT") from a stdout pipe as they come, and kills it
// with SIGKILL at random points, 200 times under each --sync policy (always,
// batch, none), restarting it after each kill to continue the stream.
//
// The promise checked: an acknowledgment means every line before it is
// applied and durable per --sync. A SIGKILL is a process crash, not a machine
// crash: the page cache survives it, so under every policy, `none` included,
// no acknowledged update may be lost (docs/durability.md, "Group
// commits"). Lines not yet acknowledged may or may not have been applied.
//
// The stream: update number u (1, 2, ...) is the line "INDEX u" with INDEX =
// (u * 7919) % kLength, so every value names its update and every update
// changes its element. A writer applies its lines in order and the next one
// starts at or before L + 1 (L the last update applied), resending no further
// back than one period of INDEX, so the updates applied are always 1..L, log
// sequence s holds update s, and the array is a function of L alone. After a kill a reader opens the
// array (doing the dead writer's recovery) and the test checks: L >= every
// update and every SEQ acknowledged so far; L <= the last update sent; the log
// is exactly records 1..L of the model (index, old and new value), without
// damage; the array equals the model after 1..L element by element (so it
// equals the replay of the whole log); the reader's sum is the model's; the
// buffer verifies (BufferedArray::Verify, and every 25th check and at the end
// the `momenta verify` process). Each acknowledgment is checked as it is
// read: COUNT in 1..--group, covering lines that were sent, and SEQ >= the
// last update it acknowledges (exactly max(L at the writer's open, that
// update) when the writer opened a state the test had checked).
//
// Where kills land, by each round's mode: within 4 ms of the writer's start
// (in its exec, its open, or its first group; the open recovers the last
// kill's state in the quarter of the rounds whose check is left to the next
// round's reader), mid-group (lines just sent: the group open, or being
// applied and committed), right after an acknowledgment arrived, and idle
// (every line acknowledged, the writer waiting for input).
// Groups close at --group 1..65536 lines or --max-delay 0..10 ms. The next
// writer resends from the first unacknowledged update (resent lines that were
// applied change nothing and log nothing) or, after a check, resumes after
// the last applied one. Half the writers rotate their log past 4 KiB
// (--log-segment 4K: every ~100 records), so kills land mid-rotation too.
//
// The seed is printed and named in every failure; MOMENTA_SEED reproduces the
// choices (the exact moment a SIGKILL lands is timing).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

extern char** environ;

namespace momenta {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kLength = 4096;
constexpr int kKills = 200;        // per sync policy
constexpr int kAckWaitMs = 10000;  // an acknowledgment later than this is a hang

uint64_t IndexOf(uint64_t u) { return (u * 7919) % kLength; }
std::string LineOf(uint64_t u) { return std::to_string(IndexOf(u)) + " " + std::to_string(u) + "\n"; }

// The array after updates 1..L: element e holds the last u <= L that names
// it, or 0. Update u names e = IndexOf(u), and IndexOf has period kLength.
class Model {
 public:
  Model() : first_(kLength) {
    for (uint64_t u = 1; u <= kLength; ++u) first_[IndexOf(u)] = u;
  }
  int64_t Value(uint64_t e, uint64_t last) const {
    const uint64_t f = first_[e];
    return static_cast<int64_t>(f > last ? 0 : f + (last - f) / kLength * kLength);
  }
  // The value update u replaced: the previous update of its element, or 0.
  static int64_t Old(uint64_t u) { return static_cast<int64_t>(u > kLength ? u - kLength : 0); }

 private:
  std::vector<uint64_t> first_;  // first_[e]: the first update that names e
};

// SIGPIPE ignored while it lives (a write to a dead writer's stdin is then
// EPIPE, not the end of the test); spawned writers get the default back.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old_);
  }
  ~IgnoreSigpipe() { sigaction(SIGPIPE, &old_, nullptr); }
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

 private:
  struct sigaction old_ {};
};

// A CLI process with its stdin and stdout on pipes of the test's (so each
// acknowledgment is read the moment it is written) and stderr in a file.
// Killed with SIGKILL on destruction if still running.
class CliProcess {
 public:
  CliProcess(const std::vector<std::string>& args, const std::string& err_path) : err_path_(err_path) {
    std::vector<std::string> argv = {MOMENTA_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return;
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    if (posix_spawn(&pid_, cargv[0], &fa, &attr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  ~CliProcess() {
    if (in_ >= 0) close(in_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // Writes `bytes` to its stdin; false when it could not (the process is gone).
  bool Send(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(in_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads what its stdout holds, waiting up to wait_ms (>= 0) for the first
  // byte; each complete line goes to lines().
  void Read(int wait_ms) {
    pollfd p{out_, POLLIN, 0};
    while (!eof_ && poll(&p, 1, wait_ms) > 0) {
      char buf[4096];
      const ssize_t n = read(out_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof_ = true;
        break;
      }
      partial_.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
        lines_.push_back(partial_.substr(0, nl));
        partial_.erase(0, nl + 1);
      }
      wait_ms = 0;
    }
  }
  // SIGKILL, reaped; true when the SIGKILL ended it (false: it had exited on
  // its own). Then reads its stdout to the end: every line it wrote counts.
  bool Kill() {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    while (!eof_) Read(-1);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }
  const std::vector<std::string>& lines() const { return lines_; }
  std::string Err() const { return testing::ReadFileBytes(err_path_); }

 private:
  const std::string err_path_;
  pid_t pid_ = -1;
  int in_ = -1;   // the write end of its stdin
  int out_ = -1;  // the read end of its stdout
  bool eof_ = false;
  std::string partial_;  // stdout bytes after the last complete line
  std::vector<std::string> lines_;
};

// "SEQ COUNT", both decimal, nothing else.
bool ParseAck(const std::string& line, uint64_t* seq, uint64_t* count) {
  const char* end = line.data() + line.size();
  auto a = std::from_chars(line.data(), end, *seq);
  if (a.ec != std::errc() || a.ptr == end || *a.ptr != ' ') return false;
  auto b = std::from_chars(a.ptr + 1, end, *count);
  return b.ec == std::errc() && b.ptr == end;
}

LogSync SyncOf(const std::string& name) {
  return name == "always" ? LogSync::kAlways : name == "batch" ? LogSync::kBatch : LogSync::kNone;
}

// What the test knows of the stream across writers.
struct StreamState {
  uint64_t acked = 0;      // the highest update number any writer acknowledged
  uint64_t acked_seq = 0;  // the highest SEQ any writer acknowledged
  uint64_t sent = 0;       // the highest update number sent to any writer
  // L found by the last check, while no writer has run since it.
  std::optional<uint64_t> checked;
};

enum class KillAt { kOpen, kMidGroup, kAfterAck, kIdle };

// After a kill: a reader opens the array (recovering what the dead writer
// left) within a bounded time, and the array, the log and the buffer are
// checked against the model (the file's header). *last receives L.
void CheckAfterKill(const std::string& path, LogSync sync, const StreamState& st, const Model& model, bool cli_verify,
                    uint64_t* last) {
  BufferedArrayOptions options;
  options.io.kind = IoKind::kPread;
  options.sync = sync;
  auto opening = std::async(std::launch::async, [&] { return BufferedArray::Open(path, options); });
  if (opening.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "a reader's open waited more than 20 s after the writer was killed";
    std::fflush(nullptr);
    std::_Exit(1);  // the stuck thread cannot be joined
  }
  auto reader = opening.get();
  ASSERT_OK(reader);
  uint64_t as_of = 0;
  auto sum = (*reader)->Summarize(0, kLength, false, nullptr, &as_of);
  ASSERT_OK(sum);

  uint64_t records = 0;
  auto log = LogReader::Open(LogDirPath(path));
  if (log.ok()) {
    LogRecord r;
    while (true) {
      auto more = (*log)->Next(&r);
      ASSERT_OK(more);
      if (!*more) break;
      const uint64_t u = ++records;
      ASSERT_EQ(r.sequence, u) << "log sequences must be dense from 1";
      int64_t old_value, new_value;
      std::memcpy(&old_value, &r.old_raw, 8);
      std::memcpy(&new_value, &r.new_raw, 8);
      ASSERT_EQ(r.index, IndexOf(u)) << "log record " << u;
      ASSERT_EQ(new_value, static_cast<int64_t>(u)) << "log record " << u << ": not update " << u;
      ASSERT_EQ(old_value, Model::Old(u)) << "log record " << u;
    }
    EXPECT_TRUE((*log)->damage().empty()) << (*log)->damage().front().ToString();
  } else {
    ASSERT_EQ(log.status().code(), Status::Code::kNotFound) << log.status().ToString();
  }
  const uint64_t l = records;
  *last = l;
  ASSERT_GE(l, st.acked) << "acknowledged updates " << l + 1 << ".." << st.acked << " are lost";
  ASSERT_GE(l, st.acked_seq) << "acknowledged log sequences " << l + 1 << ".." << st.acked_seq << " are lost";
  ASSERT_LE(l, st.sent) << "the log holds updates that were never sent";
  EXPECT_EQ((*reader)->applied_sequence(), l);
  EXPECT_EQ(as_of, l);

  std::vector<int64_t> array(kLength);
  ASSERT_OK((*reader)->array().ReadRaw(0, kLength, reinterpret_cast<char*>(array.data())));
  Int128 model_sum = 0;
  for (uint64_t e = 0; e < kLength; ++e) {
    ASSERT_EQ(array[e], model.Value(e, l)) << "element " << e << " after updates 1.." << l;
    model_sum += model.Value(e, l);
  }
  EXPECT_TRUE(sum->exact_sum == model_sum) << "the reader's sum is not the array's after updates 1.." << l;
  auto report = (*reader)->Verify();
  ASSERT_OK(report);
  ASSERT_EQ(report->mismatches, 0u) << report->examples.front();
  reader->reset();
  if (cli_verify) {
    auto v = testing::RunCli({"verify", path});
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }
}

class FollowCrashTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FollowCrashTest, KilledWriterLosesNoAcknowledgedUpdate) {
  // "<policy>_ola": the same on an array whose buffer kind is ola (recovery
  // replays into its Ola file as into the tree: buffers/ola/ola_file.h).
  std::string sync = GetParam();
  const bool ola = sync.ends_with("_ola");
  if (ola) sync.resize(sync.size() - 4);
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("--sync " + sync + ", seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  std::printf("[ seed ] follow crash test, --sync %s: MOMENTA_SEED=%llu\n", sync.c_str(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const Model model;
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  // Leaves of 64, fan-out 4 and a 1 KiB RAM tier: several levels, most on disk.
  std::vector<std::string> create = {"create",   path, "--length",     std::to_string(kLength),
                                     "--dtype",  "i8", "--leaf",       "64",
                                     "--fanout", "4",  "--ram-budget", "1024"};
  if (ola) create.insert(create.end(), {"--buffer", "ola", "--order", "3", "--bin", "16"});
  auto created = testing::RunCli(create);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  IgnoreSigpipe ignore_sigpipe;

  const std::vector<uint64_t> groups = {1, 2, 8, 64, 65536};
  const std::vector<int> delays_ms = {0, 1, 4, 10};
  StreamState st;
  uint64_t next = 1;  // the first update the next writer is sent
  int kills_at[4] = {0, 0, 0, 0}, checks = 0, resends = 0;
  uint64_t acks = 0, in_flight_kept = 0;  // in_flight_kept: applied, unacknowledged updates found by checks
  const auto started = Clock::now();
  for (int round = 0; round < kKills; ++round) {
    SCOPED_TRACE("kill " + std::to_string(round));
    const uint64_t group = groups[rng() % groups.size()];
    const int delay_ms = delays_ms[rng() % delays_ms.size()];
    const uint64_t dice = rng() % 100;
    const KillAt at = dice < 15   ? KillAt::kOpen
                      : dice < 50 ? KillAt::kMidGroup
                      : dice < 75 ? KillAt::kAfterAck
                                  : KillAt::kIdle;
    ++kills_at[static_cast<int>(at)];
    // A burst: 1, 2..16 or 17..128 lines, at most 4 groups' worth where each
    // group costs a sync (the round stays short).
    const uint64_t burst_cap = sync == "none" ? 128 : std::min<uint64_t>(128, 4 * group);
    auto burst_size = [&] {
      const uint64_t d = rng() % 100;
      const uint64_t n = d < 25 ? 1 : d < 65 ? 2 + rng() % 15 : 17 + rng() % 112;
      return std::min(n, burst_cap);
    };

    const uint64_t first = next;
    const std::optional<uint64_t> open_l = st.checked;  // L the writer opens, when the test knows it
    st.checked.reset();
    CliProcess writer({"update", path, "--follow", "--ack", "--sync", sync, "--group", std::to_string(group),
                       "--max-delay", std::to_string(delay_ms) + "ms", "--log-segment", rng() % 2 ? "4K" : "64M"},
                      dir.File("writer.err"));
    ASSERT_TRUE(writer.started());
    uint64_t sent = 0;         // lines sent to this writer: updates first..first+sent-1
    uint64_t acked_lines = 0;  // of them acknowledged
    size_t acks_read = 0;      // of writer.lines()
    auto send = [&](uint64_t n) {
      std::string lines;
      for (uint64_t k = 0; k < n; ++k) lines += LineOf(first + sent + k);
      if (!writer.Send(lines)) return false;
      sent += n;
      st.sent = std::max(st.sent, first + sent - 1);
      return true;
    };
    // Checks the acknowledgments read since the last call.
    auto take_acks = [&] {
      for (; acks_read < writer.lines().size(); ++acks_read) {
        const std::string& line = writer.lines()[acks_read];
        uint64_t seq = 0, count = 0;
        ASSERT_TRUE(ParseAck(line, &seq, &count)) << "not an acknowledgment: '" << line << "'";
        ASSERT_GE(count, 1u) << line;
        ASSERT_LE(count, group) << line << ": a group larger than --group";
        ASSERT_LE(acked_lines + count, sent) << line << ": acknowledges lines never sent";
        acked_lines += count;
        const uint64_t u = first + acked_lines - 1;
        ASSERT_GE(seq, u) << line << ": update " << u << " acknowledged below its log sequence";
        ASSERT_GE(seq, st.acked_seq) << line << ": SEQ went back";
        ASSERT_LE(seq, st.sent) << line << ": SEQ beyond the last update sent";
        if (open_l) {
          ASSERT_EQ(seq, std::max(*open_l, u)) << line;
        }
        st.acked = std::max(st.acked, u);
        st.acked_seq = seq;
        ++acks;
      }
    };
    // Reads acknowledgments until `done` or kAckWaitMs; false on the timeout.
    auto wait_acks = [&](auto done) {
      const auto deadline = Clock::now() + std::chrono::milliseconds(kAckWaitMs);
      while (!done()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return false;
        writer.Read(static_cast<int>(left));
        take_acks();
        if (::testing::Test::HasFatalFailure()) return true;
      }
      return true;
    };
    auto pause_us = [&](uint64_t max_us) { std::this_thread::sleep_for(std::chrono::microseconds(rng() % max_us)); };

    if (at == KillAt::kOpen) {
      if (rng() % 2) {
        ASSERT_TRUE(send(burst_size())) << writer.Err();
      }
      pause_us(4000);
    } else {
      for (int b = 1 + static_cast<int>(rng() % 3); b > 0; --b) {
        ASSERT_TRUE(send(burst_size())) << writer.Err();
        writer.Read(static_cast<int>(rng() % 4));  // a pause that reads what came meanwhile
        take_acks();
        if (HasFatalFailure()) return;
      }
      if (at == KillAt::kMidGroup) {
        ASSERT_TRUE(send(burst_size())) << writer.Err();
        pause_us(static_cast<uint64_t>(delay_ms + 2) * 1000);
      } else if (at == KillAt::kAfterAck) {
        ASSERT_TRUE(send(burst_size())) << writer.Err();
        const size_t before = acks_read;
        ASSERT_TRUE(wait_acks([&] { return acks_read > before; }))
            << "no acknowledgment within " << kAckWaitMs << " ms of " << sent - acked_lines
            << " lines sent: " << writer.Err();
      } else {
        ASSERT_TRUE(wait_acks([&] { return acked_lines == sent; }))
            << "only " << acked_lines << " of " << sent << " lines acknowledged within " << kAckWaitMs
            << " ms: " << writer.Err();
        pause_us(3000);
      }
      if (HasFatalFailure()) return;
    }
    ASSERT_TRUE(writer.Kill()) << "the writer exited before the kill: " << writer.Err();
    take_acks();  // the acknowledgments it wrote before it died count too
    if (HasFatalFailure()) return;

    // A quarter of the killed states go to the next writer's open unchecked
    // (it recovers them; the next check covers both kills), while the lines
    // that may have to be resent stay well within one period of IndexOf.
    const bool defer = rng() % 4 == 0 && st.sent - st.acked < kLength / 2 && round + 1 < kKills;
    if (!defer) {
      uint64_t l = 0;
      CheckAfterKill(path, SyncOf(sync), st, model, ++checks % 25 == 0, &l);
      if (HasFatalFailure()) return;
      in_flight_kept += l - st.acked;
      st.checked = l;
    }
    // Resending a line applied since its element's next update would undo
    // that one: resend only within one period of IndexOf.
    const bool resend = !st.checked || (rng() % 2 == 0 && st.sent - st.acked < kLength);
    next = resend ? st.acked + 1 : *st.checked + 1;
    if (resend && next <= st.sent) ++resends;
  }

  // The end, through the CLI: the log, a query and verify agree with the model.
  ASSERT_TRUE(st.checked);
  const uint64_t l = *st.checked;
  auto log = testing::RunCli({"log", path});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_EQ(testing::Lines(log.out).size(), l);
  int64_t model_sum = 0;
  for (uint64_t e = 0; e < kLength; ++e) model_sum += model.Value(e, l);
  auto query = testing::RunCli({"query", path, "--range", "0:" + std::to_string(kLength), "--stat", "sum"});
  ASSERT_EQ(query.exit_code, 0) << query.err;
  EXPECT_EQ(query.out, "sum " + std::to_string(model_sum) + "\n");
  auto verify = testing::RunCli({"verify", path});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf(
      "follow crash test, --sync %s: %d kills (open %d, mid-group %d, after-ack %d, idle %d), %d checks, "
      "%llu acknowledgments, %llu updates acknowledged, %llu applied, %llu unacknowledged updates found "
      "applied, %d restarts resent lines, %.1f s\n",
      sync.c_str(), kKills, kills_at[0], kills_at[1], kills_at[2], kills_at[3], checks,
      static_cast<unsigned long long>(acks), static_cast<unsigned long long>(st.acked),
      static_cast<unsigned long long>(l), static_cast<unsigned long long>(in_flight_kept), resends, seconds);
}

INSTANTIATE_TEST_SUITE_P(Sync, FollowCrashTest, ::testing::Values("always", "batch", "none", "batch_ola"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace momenta
