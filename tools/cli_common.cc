#include "tools/cli_common.h"

#include "storage/array/leftovers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "storage/io/huge_pages.h"
#include "storage/util/cancel.h"
#include "storage/util/parse_number.h"

namespace momenta::cli {

void AddCommonOptions(CLI::App* sub, CommonOptions* opts, bool with_json) {
  sub->add_option("--io", opts->io, "I/O backend: auto (io_uring when the kernel allows), uring, mmap, pread")
      ->check(CLI::IsMember({"auto", "uring", "mmap", "pread"}))
      ->capture_default_str();
  if (with_json) sub->add_flag("--json", opts->json, "print data as JSON on stdout");
  sub->add_option("--sidecar", opts->sidecar,
                  "folder of the array's buffer and log (default: PATH.momenta beside it, or under "
                  "$MOMENTA_SIDECAR_DIR)");
}

namespace {

// An empty string when `text` is a whole decimal int64, else what it must be
// (CLI11's validator convention: CLI11 puts the option's name before it).
std::string CheckInteger(const std::string& text) {
  int64_t v = 0;
  return ParseInteger(text, &v) ? "" : "must be an integer in [-2^63, 2^63)";
}

// An empty string when `text` is a count in [lo, hi], which it then becomes
// in decimal; else what is wrong. `ranged`: the message names the range.
std::string CheckCount(std::string& text, uint64_t lo, uint64_t hi, bool ranged) {
  const bool negative = !text.empty() && text[0] == '-';
  auto v = ParseCount(negative ? std::string_view(text).substr(1) : std::string_view(text), "");
  const std::string range = "' is not in range " + std::to_string(lo) + " to " + std::to_string(hi);
  if (negative && v.ok()) return ranged ? "'" + text + range : "must be >= 0";
  if (!v.ok()) return ParseCount(text, "").status().message();
  if (*v < lo || *v > hi) return ranged ? "'" + text + range : "'" + text + "' is larger than " + std::to_string(hi);
  text = std::to_string(*v);
  return "";
}

}  // namespace

CLI::Option* CountIn(CLI::Option* option, uint64_t lo, uint64_t hi) {
  return option->transform(CLI::Validator([lo, hi](std::string& text) { return CheckCount(text, lo, hi, true); },
                                          "(" + std::to_string(lo) + " to " + std::to_string(hi) + ")"));
}

CLI::Option* NonNegative(CLI::Option* option, uint64_t most) {
  return option->transform(
      CLI::Validator([most](std::string& text) { return CheckCount(text, 0, most, false); }, "(>= 0)"));
}

CLI::Option* Integer64(CLI::Option* option) {
  return option->check(CLI::Validator([](std::string& text) { return CheckInteger(text); }, "(int64)"));
}

CLI::Option* FiniteNumber(CLI::Option* option) {
  return option->check(CLI::Validator(
      [](std::string& text) {
        auto v = ParseFinite(text, "");
        return v.ok() ? std::string() : v.status().message();
      },
      "(number)"));
}

int Fail(const Status& status) {
  std::fprintf(stderr, "momenta: %s\n", status.ToString().c_str());
  return kExitRuntime;
}

int UsageFail(std::string_view message) {
  std::fprintf(stderr, "momenta: %.*s\nRun with --help for more information.\n", static_cast<int>(message.size()),
               message.data());
  return kExitUsage;
}

int FailParse(const Status& status) {
  if (status.code() == Status::Code::kInvalidArgument) return UsageFail(status.ToString());
  return Fail(status);
}

Result<std::string> ReadWholeInput(const std::string& path) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "stdin" : path;
  int fd = STDIN_FILENO;
  if (!is_stdin) {
    do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR && !CancelRequested());
    if (fd < 0) {
      if (errno == EINTR) return CheckCancel(name);
      return Status::FromErrno(name, errno);
    }
  }
  struct FdCloser {
    int fd;
    bool owned;
    ~FdCloser() {
      if (owned) ::close(fd);
    }
  } closer{fd, !is_stdin};
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(name, errno);
  if (S_ISDIR(st.st_mode)) return Status::FromErrno(name, EISDIR);
  std::string out;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    out.reserve(static_cast<size_t>(st.st_size));
    AdviseHugePages(out.data(), out.capacity());
  }
  char buf[1 << 16];
  while (true) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(name));
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;  // a signal: CheckCancel above decides
      return Status::FromErrno(name, errno);
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<IoOptions> MakeIoOptions(const CommonOptions& opts, bool writable) {
  auto kind = ParseIoKind(opts.io, "--io");
  if (!kind.ok()) return kind.status();
  IoOptions io;
  io.kind = *kind;
  io.writable = writable;
  return io;
}

void PrintNotice(const std::string& notice) {
  if (!notice.empty()) std::fprintf(stderr, "momenta: note: %s\n", notice.c_str());
}

Result<std::unique_ptr<ArrayFile>> OpenArray(const std::string& path, const CommonOptions& opts, bool writable) {
  auto io = MakeIoOptions(opts, writable);
  if (!io.ok()) return io.status();
  std::string notice;
  auto array = ArrayFile::Open(path, *io, &notice);
  PrintNotice(notice);
  return array;
}

void RemoveDeadTemporaries(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> notices;
  RemoveFilesOfDeadProcesses(dir, {prefix}, &notices);
  for (const auto& n : notices) PrintNotice(n);
}

std::string Counted(uint64_t n, std::string_view singular, std::string_view plural) {
  std::string out = std::to_string(n);
  out += ' ';
  if (n == 1)
    out.append(singular);
  else if (plural.empty())
    out.append(singular).append("s");
  else
    out.append(plural);
  return out;
}

uint64_t AllocatedBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
}

Progress::Progress(std::string label, uint64_t total_bytes)
    : label_(std::move(label)), total_(total_bytes), enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { Finish(); }

void Progress::Update(uint64_t done_bytes) {
  if (!enabled_ || finished_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  double pct = total_ ? 100.0 * static_cast<double>(done_bytes) / static_cast<double>(total_) : 100.0;
  std::fprintf(stderr, "\r%s: %5.1f%% (%s of %s)   ", label_.c_str(), pct, FormatBytes(done_bytes).c_str(),
               FormatBytes(total_).c_str());
  std::fflush(stderr);
}

void Progress::Finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (last_draw_ != std::chrono::steady_clock::time_point{}) std::fprintf(stderr, "\r\033[K");
}

}  // namespace momenta::cli
