// The CLI's command-line parsing and small defects: subcommands
// named when none or an unknown one is given, text detected on stdin by
// import, binary refused on a terminal by export, and every numeric option
// refusing what does not fit it (empty, negative, overflowing, non-finite)
// with a usage error, while every count form ParseCount takes works in ranges.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_util.h"

extern char** environ;

namespace momenta {
namespace {

using testing::CommandResult;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

bool Contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// A usage error: exit 2 and a message starting "momenta: " that mentions `needle`.
void ExpectUsageError(const CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("momenta: ", 0), 0u) << r.err;
  EXPECT_TRUE(Contains(r.err, needle)) << "missing '" << needle << "' in: " << r.err;
}

// An array of `values` (i8), built with create and set.
void MakeArray(const std::string& path, const std::vector<std::string>& values) {
  ASSERT_EQ(RunCli({"create", path, "--length", std::to_string(values.size()), "--dtype", "i8"}).exit_code, 0);
  std::vector<std::string> set{"set", path, "0", "--"};
  set.insert(set.end(), values.begin(), values.end());
  auto r = RunCli(set);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliParseTest, MissingOrUnknownSubcommandNamesTheSubcommands) {
  const std::vector<std::string> all = {"create", "info",   "get", "set",    "import", "export", "query", "build",
                                        "verify", "update", "log", "window", "root",   "site",   "ask"};
  auto none = RunCli({});
  ExpectUsageError(none, "a subcommand is required");
  auto unknown = RunCli({"frobnicate", "x.npy"});
  ExpectUsageError(unknown, "unknown subcommand 'frobnicate'");
  for (const auto& name : all) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(Contains(none.err, " " + name)) << none.err;
    EXPECT_TRUE(Contains(unknown.err, " " + name)) << unknown.err;
  }
  // A bad option of a known subcommand is its own error, also prefixed.
  ExpectUsageError(RunCli({"create", "x.npy", "--bogus"}), "--bogus");
  EXPECT_EQ(RunCli({"--help"}).exit_code, 0);
}

TEST(CliParseTest, ImportFromStdinReadsTextWithoutFormat) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  auto r = RunCli({"import", "-", a, "--dtype", "i4"}, "1, 2\n-3 40\n# comment\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunCli({"get", a, "0", "--count", "4"}).out, "1\n2\n-3\n40\n");
  // Binary on stdin is named as such, not taken for bad text or a missing file "-".
  auto npy = RunCli({"import", "-", dir.File("b.npy")}, ReadFileBytes(a));
  EXPECT_EQ(npy.exit_code, 1) << npy.err;
  EXPECT_TRUE(Contains(npy.err, "stdin: holds a .npy file")) << npy.err;
  auto raw = RunCli({"import", "-", dir.File("b.npy")}, std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ(raw.exit_code, 1) << raw.err;
  EXPECT_TRUE(Contains(raw.err, "stdin: holds binary data")) << raw.err;
  ExpectUsageError(RunCli({"import", "-", dir.File("b.npy"), "--format", "raw", "--dtype", "f8"}, "1\n"), "stdin");
  EXPECT_FALSE(std::filesystem::exists(dir.File("b.npy")));
}

// Why no pseudo-terminal can be opened here ("" when one can): a container
// without /dev/pts, or one where the slave side cannot be opened.
std::string NoPseudoTerminal() {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0) return std::string("posix_openpt: ") + std::strerror(errno);
  std::string why;
  if (::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    why = std::string("grantpt/unlockpt: ") + std::strerror(errno);
  } else if (const char* name = ::ptsname(master); name == nullptr) {
    why = std::string("ptsname: ") + std::strerror(errno);
  } else if (const int slave = ::open(name, O_RDWR | O_NOCTTY); slave < 0) {
    why = std::string("open ") + name + ": " + std::strerror(errno);
  } else {
    ::close(slave);
  }
  ::close(master);
  return why;
}

// Runs the CLI with stdout on a new pseudo-terminal; returns the exit code
// and what reached the terminal (stderr goes to `err`).
int RunOnTerminal(const std::vector<std::string>& args, std::string* tty_out, std::string* err) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return -100;
  const char* slave_name = ::ptsname(master);
  const int slave = slave_name ? ::open(slave_name, O_RDWR | O_NOCTTY) : -1;
  if (slave < 0) return -101;
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return -102;
  std::vector<std::string> argv{MOMENTA_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, slave, 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(slave);
  ::close(err_pipe[1]);
  if (rc != 0) return -103;
  int status = 0;
  // The outputs here are small: drain the terminal until the child is gone.
  while (true) {
    pollfd fds[2] = {{master, POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    if (::poll(fds, 2, 100) > 0) {
      char buf[4096];
      if (fds[0].revents & POLLIN) {
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n > 0) tty_out->append(buf, n);
      }
      if (fds[1].revents & POLLIN) {
        const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
        if (n > 0) err->append(buf, n);
      }
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
  }
  char buf[4096];
  for (ssize_t n; (n = ::read(err_pipe[0], buf, sizeof buf)) > 0;) err->append(buf, n);
  const int flags = ::fcntl(master, F_GETFL);
  ::fcntl(master, F_SETFL, flags | O_NONBLOCK);
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) tty_out->append(buf, n);
  ::close(err_pipe[0]);
  ::close(master);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CliParseTest, ExportRefusesBinaryOnATerminal) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  MakeArray(a, {"7", "-1", "300"});
  if (const std::string why = NoPseudoTerminal(); !why.empty()) GTEST_SKIP() << "no pseudo-terminal here: " << why;
  std::string tty, err;
  const int raw = RunOnTerminal({"export", a, "-"}, &tty, &err);
  ASSERT_GT(raw, -100) << "no pseudo-terminal here (" << raw << ")";
  EXPECT_EQ(raw, 2) << err;
  EXPECT_TRUE(Contains(err, "terminal")) << err;
  EXPECT_TRUE(Contains(err, "--format csv")) << err;
  EXPECT_EQ(tty, "");
  tty.clear();
  err.clear();
  EXPECT_EQ(RunOnTerminal({"export", a, "-", "--format", "raw"}, &tty, &err), 2) << err;
  EXPECT_EQ(tty, "");
  // Text is fine on a terminal, and binary is fine into a pipe.
  tty.clear();
  err.clear();
  EXPECT_EQ(RunOnTerminal({"export", a, "-", "--format", "csv"}, &tty, &err), 0) << err;
  EXPECT_EQ(tty, "7\r\n-1\r\n300\r\n");
  auto piped = RunCli({"export", a, "-"});
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out.size(), 3u * 8);
}

TEST(CliParseTest, EmptyIndexIsRefusedNotZero) {
  ScratchDir dir;
  const std::string a = dir.File("c.npy");
  MakeArray(a, {"1", "2", "3"});
  const std::string before = ReadFileBytes(a);
  ExpectUsageError(RunCli({"set", a, "", "9"}), "INDEX");
  ExpectUsageError(RunCli({"get", a, ""}), "INDEX");
  ExpectUsageError(RunCli({"set", a, "-", "9"}), "INDEX");
  EXPECT_EQ(ReadFileBytes(a), before);
  EXPECT_EQ(RunCli({"get", a, "0", "--count", "3"}).out, "1\n2\n3\n");
  // The count forms name an index too, and -N counts from the end.
  ASSERT_EQ(RunCli({"set", a, "2^1", "30"}).exit_code, 0);
  EXPECT_EQ(RunCli({"get", a, "-1"}).out, "30\n");
  EXPECT_EQ(RunCli({"get", a, "-2^0"}).out, "30\n");
  EXPECT_EQ(RunCli({"get", a, "-3", "--count", "2"}).out, "1\n2\n");
  EXPECT_EQ(RunCli({"get", a, "-4"}).exit_code, 1);
}

TEST(CliParseTest, RangesTakeEveryCountForm) {
  ScratchDir dir;
  const std::string a = dir.File("r.npy");
  std::vector<std::string> values;
  int64_t total = 0;
  for (int k = 0; k < 40; ++k) {
    values.push_back(std::to_string(k * k - 7));
    total += k * k - 7;
  }
  MakeArray(a, values);
  auto sum_of = [&](int64_t p, int64_t q) {
    int64_t s = 0;
    for (int64_t k = p; k < q; ++k) s += k * k - 7;
    return "sum " + std::to_string(s) + "\n";
  };
  for (const auto& [range, p, q] : std::vector<std::tuple<std::string, int64_t, int64_t>>{
           {"0:2^3", 0, 8},
           {"2^2:3*2^3", 4, 24},
           {"-2^3:", 32, 40},
           {"-2^4:-2^1", 24, 38},
           {"-3*2^2:-1", 28, 39},
           {"1*5:2^5*1", 5, 32},
           {":", 0, 40},
       }) {
    SCOPED_TRACE(range);
    auto r = RunCli({"query", a, "--range", range, "--stat", "sum"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, sum_of(p, q));
  }
  EXPECT_EQ(RunCli({"query", a, "--range", ":", "--stat", "sum"}).out, "sum " + std::to_string(total) + "\n");
  auto e = RunCli({"export", a, dir.File("e.csv"), "--range", "-2^1:"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(ReadFileBytes(dir.File("e.csv")), "1437\n1514\n");
  ExpectUsageError(RunCli({"query", a, "--range", "2^:3", "--stat", "sum"}), "--range");
  ExpectUsageError(RunCli({"query", a, "--range", "1:-", "--stat", "sum"}), "--range");
  ExpectUsageError(RunCli({"query", a, "--range", "0:2^64", "--stat", "sum"}), "--range");
  ExpectUsageError(RunCli({"query", a, "--range", "0:1.5", "--stat", "sum"}), "--range");
  EXPECT_EQ(RunCli({"query", a, "--range", "0:2^6", "--stat", "sum"}).exit_code, 1);  // past the end
}

TEST(CliParseTest, NumericOptionsRefuseWhatDoesNotFit) {
  ScratchDir dir;
  const std::string a = dir.File("n.npy");
  MakeArray(a, {"1", "2", "3", "4"});
  const std::vector<std::string> q = {"query", a, "--range", ":", "--stat", "moment"};
  auto with = [&](std::vector<std::string> base, std::vector<std::string> more) {
    base.insert(base.end(), more.begin(), more.end());
    return RunCli(base);
  };
  // --order: the valid range is named, -5 is not order 1.
  ExpectUsageError(with(q, {"--order", "-5"}), "not in range 0 to 8");
  ExpectUsageError(with(q, {"--order", "9"}), "not in range 0 to 8");
  ExpectUsageError(with(q, {"--order", "99999999999999999999"}), "--order");
  auto ok = with(q, {"--order", "0"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "moment 10\n");
  // --about: finite numbers only, overflow included (1e400 is not infinity).
  for (const char* about : {"1e400", "-1e400", "inf", "-inf", "nan", "1x", ""}) {
    SCOPED_TRACE(about);
    ExpectUsageError(with(q, {"--about", about}), "--about");
  }
  auto about = with(q, {"--about", "2.5e0", "--order", "1"});
  EXPECT_EQ(about.exit_code, 0) << about.err;
  EXPECT_EQ(about.out, "moment -5\n");  // sum (k - 2.5) a[k] = -2.5 - 3 - 1.5 + 2
  ExpectUsageError(with({"query", a, "--range", ":", "--stat", "polyfit"}, {"--degree", "-1"}), "--degree");
  ExpectUsageError(with({"query", a, "--range", ":", "--stat", "var"}, {"--ddof", "-1"}), "--ddof");
  // Buffer and write options.
  ExpectUsageError(RunCli({"build", a, "--ram-budget", "2^62M"}), "--ram-budget");
  ExpectUsageError(RunCli({"build", a, "--leaf", "2^64"}), "--leaf");
  ExpectUsageError(RunCli({"create", dir.File("x.npy"), "--length", "2^64"}), "--length");
  ExpectUsageError(RunCli({"create", dir.File("x.npy"), "--length", ""}), "--length");
  ExpectUsageError(RunCli({"create", dir.File("x.npy"), "--shape", "2,-1"}), "--shape");
  ExpectUsageError(RunCli({"get", a, "0", "--count", "-1"}), "--count");
  // 1^N and 0^N are computed, not looped N times (this one took hours).
  auto power = testing::RunCommand(
      {"/usr/bin/timeout", "10", MOMENTA_CLI_PATH, "get", a, "1", "--count", "1^9999999999999999999*0^0*2^1"});
  EXPECT_EQ(power.exit_code, 0) << power.err;
  EXPECT_EQ(power.out, "2\n3\n");
  ExpectUsageError(RunCli({"get", a, "0", "--count", "0^9999999999999999999*2^64"}), "--count");
  ExpectUsageError(RunCli({"update", a, "--retain", "-5"}, "0 1\n"), "--retain");
  ExpectUsageError(RunCli({"update", a, "--log-segment", "1K"}, "0 1\n"), "--log-segment");
  ExpectUsageError(RunCli({"set", a, "0", "1", "--log-segment", "2G"}), "--log-segment");
  ExpectUsageError(RunCli({"update", a, "--log-segment", "lots"}, "0 1\n"), "--log-segment");
  ExpectUsageError(RunCli({"update", a, "--time", "99999999999999999999"}, "0 1\n"), "--time");
  EXPECT_FALSE(std::filesystem::exists(dir.File("x.npy")));
  // log: sequences are >= 0 and fit 64 bits.
  ExpectUsageError(RunCli({"log", a, "--from", "-1"}), "--from");
  ExpectUsageError(RunCli({"log", a, "--from", "99999999999999999999"}), "--from");
  ExpectUsageError(RunCli({"log", a, "--since", "99999999999999999999"}), "--since");
  auto log = RunCli({"log", a, "--from", "2^1"});
  EXPECT_EQ(log.exit_code, 0) << log.err;
  EXPECT_EQ(std::count(log.out.begin(), log.out.end(), '\n'), 3) << log.out;  // records 2..4 of 1..4
  EXPECT_EQ(RunCli({"get", a, "0", "--count", "4"}).out, "1\n2\n3\n4\n");     // nothing above changed it
  // The stream commands' counts and timeouts (refused while parsing; the
  // root's bad --listen keeps a root that took them from serving forever).
  WriteFileBytes(dir.File("w.txt"), "1 1\n2 2\n");
  ExpectUsageError(RunCli({"window", "--input", dir.File("w.txt"), "--window", "10", "--eps", "0.1", "--top", "-1"}),
                   "--top");
  const std::vector<std::string> root = {"root", "--listen", "127.0.0.1:99999", "--eps", "0.1", "--window", "10"};
  ExpectUsageError(with(root, {"--handshake-timeout", "-1"}), "--handshake-timeout");
  ExpectUsageError(with(root, {"--idle-timeout", "-5"}), "--idle-timeout");
  ExpectUsageError(RunCli({"ask", "127.0.0.1:1", "count", "--at", "5", "--wait", "-1"}), "--wait");
  ExpectUsageError(RunCli({"ask", "127.0.0.1:1", "count", "--at", "99999999999999999999"}), "--at");
  ExpectUsageError(RunCli({"window", "--input", dir.File("w.txt"), "--window", "10", "--eps", "0.1", "--top",
                           "99999999999999999999"}),
                   "--top");
}

TEST(CliParseTest, UpdateInputMustBeAReadableFile) {
  ScratchDir dir;
  const std::string a = dir.File("u.npy");
  MakeArray(a, {"1", "2"});
  const std::string folder = dir.File("updates");
  std::filesystem::create_directory(folder);
  auto d = RunCli({"update", a, "--input", folder});
  EXPECT_EQ(d.exit_code, 1) << d.err;
  EXPECT_TRUE(Contains(d.err, folder + ": Is a directory")) << d.err;
  EXPECT_EQ(std::count(d.err.begin(), d.err.end(), '\n'), 1) << d.err;
  auto missing = RunCli({"update", a, "--input", dir.File("none.txt")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Contains(missing.err, dir.File("none.txt"))) << missing.err;
  EXPECT_EQ(RunCli({"get", a, "0", "--count", "2"}).out, "1\n2\n");
  WriteFileBytes(dir.File("u.txt"), "1 5\n");
  auto file = RunCli({"update", a, "--input", dir.File("u.txt")});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(RunCli({"get", a, "1"}).out, "5\n");
}

}  // namespace
}  // namespace momenta
