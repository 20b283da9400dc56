// SIGINT and SIGTERM end the CLI's long batch commands (update, import,
// export, build) within a second, exit 128 + the signal, remove their
// temporary files and leave what they applied consistent and said; a
// temporary left by a SIGKILLed import is removed by the next import.
//
// Each command runs on data that keeps it busy for seconds without costing
// disk: sparse arrays (holes are read, never written) and an input pipe that
// stays open.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

extern char** environ;

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;
using Clock = std::chrono::steady_clock;

// The CLI in the background with the given stdin and stdout (stderr to a
// file); SIGKILLed on destruction if still running.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& err_path, int in_fd = -1, int out_fd = -1)
      : err_path_(err_path) {
    std::vector<std::string> argv{MOMENTA_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& s : argv) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (in_fd >= 0)
      posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
    else
      posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0)
      posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    else
      posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (::posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    EXPECT_GT(pid_, 0) << "cannot start " << argv[0];
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) { ::kill(pid_, sig); }
  // The exit code; -1 when killed by a signal; -2 when still running after wait_ms.
  int Wait(int wait_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      if (Clock::now() > deadline) return -2;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }
  std::string Err() const { return ReadFileBytes(err_path_); }

 private:
  pid_t pid_ = -1;
  const std::string err_path_;
};

// Sends `sig`, waits for the exit; the exit code and the seconds it took.
std::pair<int, double> StopWith(Child& child, int sig) {
  const auto start = Clock::now();
  child.Signal(sig);
  const int rc = child.Wait(10000);
  return {rc, std::chrono::duration<double>(Clock::now() - start).count()};
}

// Files in `dir` (not recursive) whose name contains `part`.
std::vector<std::string> FilesWith(const std::string& dir, const std::string& part) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().find(part) != std::string::npos) out.push_back(e.path().string());
  return out;
}

// Waits until a file whose name contains `part` appears in `dir`.
bool WaitForFile(const std::string& dir, const std::string& part, int wait_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (Clock::now() < deadline) {
    if (!FilesWith(dir, part).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

constexpr int kSignals[] = {SIGINT, SIGTERM};

bool Contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// A sparse f8 array of 2^32 elements (32 GiB of holes, nothing on disk):
// reading it through takes seconds.
std::string MakeHugeSparse(const ScratchDir& dir) {
  const std::string src = dir.File("huge.npy");
  auto c = RunCli({"create", src, "--length", "2^32"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  return src;
}

TEST(CliSignalsTest, UpdateWaitingOnAPipeStopsAndAppliesNothing) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", a, "--length", "1000", "--dtype", "i8"}).exit_code, 0);
  const std::string fifo = dir.File("updates.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    // Held open for writing: the reader waits for more, as on a live pipe.
    const int writer = ::open(fifo.c_str(), O_RDWR);
    ASSERT_GE(writer, 0);
    ASSERT_EQ(::write(writer, "1 5\n2 6\n", 8), 8);
    Child update({"update", a, "--input", fifo}, dir.File("update.err"));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    auto [rc, seconds] = StopWith(update, sig);
    ::close(writer);
    EXPECT_EQ(rc, 128 + sig) << update.Err();
    EXPECT_LT(seconds, 3.0);
    EXPECT_TRUE(Contains(update.Err(), "Interrupted")) << update.Err();
    EXPECT_TRUE(Contains(update.Err(), "no update was applied")) << update.Err();
    EXPECT_EQ(RunCli({"get", a, "1", "--count", "2"}).out, "0\n0\n");
    EXPECT_EQ(RunCli({"log", a}).out, "");
    EXPECT_EQ(FilesWith(a + ".momenta", ".new-"), std::vector<std::string>{});
  }
}

TEST(CliSignalsTest, UpdateStoppedMidwaySaysWhichSequencesItApplied) {
  ScratchDir dir;
  const std::string a = dir.File("m.npy");
  constexpr uint64_t kN = uint64_t{1} << 19;
  ASSERT_EQ(RunCli({"create", a, "--length", std::to_string(kN), "--dtype", "i8"}).exit_code, 0);
  // Update k sets a distinct index (7919 is odd: a bijection mod 2^19) to k + 1.
  std::string input;
  for (uint64_t k = 0; k < kN; ++k) input += std::to_string(k * 7919 % kN) + " " + std::to_string(k + 1) + "\n";
  testing::WriteFileBytes(dir.File("u.txt"), input);
  const int sig = SIGTERM;
  Child update({"update", a, "--input", dir.File("u.txt"), "--sync", "none"}, dir.File("update.err"));
  // Stop it once some chunks are in the log (the rest are still to come).
  const std::string log_dir = a + ".momenta/log";
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  uint64_t logged = 0;
  while (Clock::now() < deadline && logged < (64u << 10)) {
    logged = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(log_dir, ec))
      if (e.path().filename().string().find("segment") != std::string::npos || e.path().extension() == ".log")
        logged += e.file_size(ec);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  auto [rc, seconds] = StopWith(update, sig);
  const std::string err = update.Err();
  if (rc == 0) GTEST_SKIP() << "all updates were applied before the signal arrived; nothing to check";
  EXPECT_EQ(rc, 128 + sig) << err;
  EXPECT_LT(seconds, 3.0);
  std::smatch m;
  const std::regex said(R"(applied the first (\d+) of (\d+) updates \(log sequences (\d+)\.\.(\d+)\), the rest not)");
  ASSERT_TRUE(std::regex_search(err, m, said)) << err;
  const uint64_t applied = std::stoull(m[1]), first = std::stoull(m[3]), last = std::stoull(m[4]);
  EXPECT_EQ(std::stoull(m[2]), kN);
  EXPECT_GT(applied, 0u);
  EXPECT_LT(applied, kN);
  EXPECT_EQ(applied % 4096, 0u) << "stopped inside a chunk (all indices are distinct: chunks of 4096)";
  EXPECT_EQ(last - first + 1, applied);  // every update changed its element
  // The array, its buffer and its log hold exactly the first `applied` updates.
  const std::string log = RunCli({"log", a, "--from", std::to_string(last)}).out;
  EXPECT_EQ(log.substr(0, log.find(' ')), std::to_string(last)) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  const uint64_t sum = applied * (applied + 1) / 2;
  EXPECT_EQ(RunCli({"query", a, "--range", ":", "--stat", "sum", "--stat", "max"}).out,
            "sum " + std::to_string(sum) + "\nmax " + std::to_string(applied) + "\n");
  EXPECT_EQ(RunCli({"verify", a}).exit_code, 0);
}

TEST(CliSignalsTest, ImportAndExportStopAndRemoveTheirTemporaries) {
  ScratchDir dir;
  const std::string src = MakeHugeSparse(dir);
  for (const char* command : {"import", "export"}) {
    for (int sig : kSignals) {
      SCOPED_TRACE(std::string(command) + " " + strsignal(sig));
      const std::string dest = dir.File("dest.npy");
      Child child({command, src, dest}, dir.File("child.err"));
      ASSERT_TRUE(WaitForFile(dir.path(), "dest.npy.partial-", 10000)) << child.Err();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // well inside the copy
      auto [rc, seconds] = StopWith(child, sig);
      EXPECT_EQ(rc, 128 + sig) << child.Err();
      EXPECT_LT(seconds, 3.0);
      EXPECT_TRUE(Contains(child.Err(), "Interrupted")) << child.Err();
      EXPECT_TRUE(Contains(child.Err(), dest + " was not created")) << child.Err();
      EXPECT_EQ(FilesWith(dir.path(), ".partial-"), std::vector<std::string>{});
      EXPECT_FALSE(std::filesystem::exists(dest));
    }
  }
}

TEST(CliSignalsTest, ExportBlockedOnAFullPipeStops) {
  ScratchDir dir;
  const std::string src = MakeHugeSparse(dir);
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    int pipe_fds[2];
    ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);  // never read: the writer blocks once it is full
    Child child({"export", src, "-", "--format", "raw"}, dir.File("child.err"), -1, pipe_fds[1]);
    // Wait until the pipe is full: the export is blocked in write(2).
    const int capacity = ::fcntl(pipe_fds[0], F_GETPIPE_SZ);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    for (int queued = 0; queued < capacity && Clock::now() < deadline;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ASSERT_EQ(::ioctl(pipe_fds[0], FIONREAD, &queued), 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto [rc, seconds] = StopWith(child, sig);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    EXPECT_EQ(rc, 128 + sig) << child.Err();
    EXPECT_LT(seconds, 3.0);
    EXPECT_TRUE(Contains(child.Err(), "Interrupted: stdout")) << child.Err();
  }
}

// 2^30 elements (8 GiB, sparse) with a 1 in every 8 MiB: with leaves of
// 2^20 elements (build --leaf 2^20) all hold data, so a build reads (holes)
// and sums all of it, for seconds.
void MakeSlowToBuild(const std::string& a) {
  ASSERT_EQ(RunCli({"create", a, "--length", "2^30"}).exit_code, 0);
  std::string input;
  for (uint64_t k = 0; k < 1024; ++k) input += std::to_string(k << 20) + " 1\n";
  ASSERT_EQ(RunCli({"update", a}, input).exit_code, 0);
}

TEST(CliSignalsTest, BuildStopsAndLeavesNoNewTree) {
  ScratchDir dir;
  const std::string a = dir.File("b.npy");
  MakeSlowToBuild(a);
  const std::string sidecar = a + ".momenta";
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    Child build({"build", a, "--leaf", "2^20"}, dir.File("build.err"));
    ASSERT_TRUE(WaitForFile(sidecar, "tree.new-", 10000)) << build.Err();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto [rc, seconds] = StopWith(build, sig);
    EXPECT_EQ(rc, 128 + sig) << build.Err();
    EXPECT_LT(seconds, 3.0);
    EXPECT_TRUE(Contains(build.Err(), "Interrupted")) << build.Err();
    EXPECT_EQ(FilesWith(sidecar, ".new-"), std::vector<std::string>{});
  }
  // The buffer that was there still answers.
  auto q = RunCli({"query", a, "--range", ":", "--stat", "sum"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "sum 1024\n");
}

TEST(CliSignalsTest, KilledBuildsNewTreeIsRemovedByTheNextWriter) {
  ScratchDir dir;
  const std::string a = dir.File("b.npy");
  MakeSlowToBuild(a);
  const std::string sidecar = a + ".momenta";
  pid_t killed = -1;
  {
    Child build({"build", a, "--leaf", "2^20"}, dir.File("build.err"));
    killed = build.pid();
    ASSERT_TRUE(WaitForFile(sidecar, "tree.new-", 10000)) << build.Err();
    build.Signal(SIGKILL);
    EXPECT_EQ(build.Wait(5000), -1);
  }
  const std::string left = sidecar + "/tree.new-" + std::to_string(killed);
  ASSERT_TRUE(std::filesystem::exists(left));
  const std::string live = sidecar + "/tree.new-" + std::to_string(::getpid());
  testing::WriteFileBytes(live, "busy");
  // A reader changes nothing; the next writer removes what the dead one left.
  EXPECT_EQ(RunCli({"query", a, "--range", ":", "--stat", "sum"}).out, "sum 1024\n");
  EXPECT_TRUE(std::filesystem::exists(left));
  auto set = RunCli({"set", a, "1", "3"});
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_TRUE(Contains(set.err, "removed " + left)) << set.err;
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_EQ(RunCli({"query", a, "--range", ":", "--stat", "sum"}).out, "sum 1027\n");
}

TEST(CliSignalsTest, KilledImportsTemporaryIsRemovedByTheNextImport) {
  ScratchDir dir;
  const std::string src = MakeHugeSparse(dir);
  const std::string dest = dir.File("dest.npy");
  pid_t killed = -1;
  {
    Child child({"import", src, dest}, dir.File("child.err"));
    killed = child.pid();
    ASSERT_TRUE(WaitForFile(dir.path(), "dest.npy.partial-", 10000)) << child.Err();
    child.Signal(SIGKILL);
    EXPECT_EQ(child.Wait(5000), -1);
  }
  const std::string left = dest + ".partial-" + std::to_string(killed);
  ASSERT_TRUE(std::filesystem::exists(left));
  // Not removed: a live process's temporary (this test's pid), and names that are no pid.
  const std::string live = dest + ".partial-" + std::to_string(::getpid());
  const std::string odd = dest + ".partial-x1";
  testing::WriteFileBytes(live, "busy");
  testing::WriteFileBytes(odd, "odd");
  testing::WriteFileBytes(dir.File("in.csv"), "1\n2\n");
  auto r = RunCli({"import", dir.File("in.csv"), dest});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "removed " + left)) << r.err;
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(odd));
  EXPECT_EQ(RunCli({"get", dest, "0", "--count", "2"}).out, "1\n2\n");
}

}  // namespace
}  // namespace momenta
