// Pieces every subcommand shares: exit codes, error printing, the parsers of
// counts and P:Q ranges (cli_parse.h), opening arrays with the chosen
// backend, progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"
#include "storage/util/format_bytes.h"  // FormatBytes, shared with storage's messages
#include "storage/util/status.h"
#include "tools/cli_parse.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace momenta::cli {

// 0 ok, 1 runtime error (I/O, corrupt file, bad value, index out of range),
// 2 usage error (malformed command line; CLI11's own errors map here too).
enum ExitCode : int { kExitOk = 0, kExitRuntime = 1, kExitUsage = 2 };

// Options every subcommand takes.
struct CommonOptions {
  std::string io = "auto";  // --io auto|uring|mmap|pread
  bool json = false;        // --json: data on stdout as JSON
  std::string sidecar;      // --sidecar DIR: the sidecar folder (default: storage/array/sidecar.h's rules)
};

// The work a parsed subcommand will do; main() runs it after parsing.
using Command = std::function<int()>;

// Adds --io (and, when `with_json`, --json) to a subcommand.
void AddCommonOptions(CLI::App* sub, CommonOptions* opts, bool with_json = true);

// Makes an unsigned integer option take the count forms of ParseCount
// ("1000", "2^30", "3*2^20") and lie in [lo, hi]: anything else is a usage
// error naming the option ("--bins: '2^x' is not a count (e.g. 1000, 2^20,
// 3*2^20)", "--order: '9' is not in range 0 to 8"). hi must fit the target.
CLI::Option* CountIn(CLI::Option* option, uint64_t lo, uint64_t hi);
// CountIn(option, 0, most) where only the target's width limits it:
// "--retain: must be >= 0"; `most` is the largest value the target holds
// (INT64_MAX unless it is narrower).
CLI::Option* NonNegative(CLI::Option* option, uint64_t most = INT64_MAX);
// The same for a signed integer option: a whole decimal int64.
CLI::Option* Integer64(CLI::Option* option);
// A floating-point option: ParseFinite's forms ("0.01", "1e-3"); anything
// else ("abc", "inf", "1e400") is a usage error naming the option.
CLI::Option* FiniteNumber(CLI::Option* option);

// Prints "momenta: <status>" on stderr; returns kExitRuntime.
int Fail(const Status& status);
// Prints "momenta: <message>" and a hint to --help; returns kExitUsage.
int UsageFail(std::string_view message);

// All bytes of the file `path`, or of stdin when `path` is "-" (named
// "stdin" in errors). A folder or an unreadable file is an IO error naming
// it; a signal (storage/util/cancel.h) while waiting is Interrupted.
Result<std::string> ReadWholeInput(const std::string& path);

// Maps a status from ParseRange/ParseCount to the right exit code and message.
int FailParse(const Status& status);

// Builds IoOptions from --io; opens the array, printing the backend fallback
// notice (if any) once on stderr.
Result<IoOptions> MakeIoOptions(const CommonOptions& opts, bool writable);
Result<std::unique_ptr<ArrayFile>> OpenArray(const std::string& path, const CommonOptions& opts, bool writable);
void PrintNotice(const std::string& notice);

// Removes the files "<dir>/<prefix><PID>" whose process PID is gone, each
// with a notice: what a killed command left (import's DEST.partial-PID,
// build's tree.new-PID). A file of a running process (or of an earlier
// process that had this one's pid: removed) and other names are left alone.
void RemoveDeadTemporaries(const std::string& dir, const std::string& prefix);

// A count and its noun in the right number: "1 update", "2 updates", "0
// ranges"; `plural` when the noun does not take an "s" ("1 match", "3 matches").
std::string Counted(uint64_t n, std::string_view singular, std::string_view plural = {});
// The bytes of disk the file takes (st_blocks * 512; a sparse file's holes take
// none); 0 when it cannot be stat'ed.
uint64_t AllocatedBytes(const std::string& path);

// Progress of long work on stderr, shown only when stderr is a TTY, redrawn at
// most a few times a second.
class Progress {
 public:
  Progress(std::string label, uint64_t total_bytes);
  ~Progress();
  void Update(uint64_t done_bytes);
  void Finish();

 private:
  const std::string label_;
  const uint64_t total_;
  const bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// Wall-clock stopwatch for "took N ms" lines.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ElapsedMicros() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace momenta::cli
