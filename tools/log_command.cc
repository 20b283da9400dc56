// momenta log: print an array's update log, or follow it (--tail).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>

#include "storage/array/array_file.h"
#include "storage/log/log_codec.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/util/cancel.h"
#include "storage/util/json_writer.h"
#include "storage/util/stop_token.h"
#include "stream/drive/log_wait.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"

namespace momenta::cli {
namespace {

struct LogArgs {
  CommonOptions common;
  std::string path;
  std::string since, until;
  std::string from;  // --from N: a sequence number, >= 0
  bool tail = false;
};

int RunLog(const LogArgs& a) {
  auto since = ParseTimeMs(a.since, std::numeric_limits<int64_t>::min(), "--since");
  auto until = ParseTimeMs(a.until, std::numeric_limits<int64_t>::max(), "--until");
  if (!since.ok()) return UsageFail(since.status().ToString());
  if (!until.ok()) return UsageFail(until.status().ToString());
  uint64_t from = 0;
  if (!a.from.empty()) {
    auto n = ParseCount(a.from, "--from");
    if (!n.ok()) return UsageFail(n.status().ToString());
    from = *n;
  }
  // SIGINT / SIGTERM end the wait, the listing or --tail at the next record: exit 130 / 143.
  InstallCancelHandlers();
  if (a.tail) {  // a follower may start before the data: wait for the array and its log
    auto found = WaitForLogDir(a.path, a.common.sidecar, StopToken::Cancel(), PrintNotice);
    if (!found.ok()) return CancelRequested() ? StopExitCode() : Fail(found.status());
  }
  // The array tells the dtype of the values (and that PATH is an array).
  auto array = OpenArray(a.path, a.common, /*writable=*/false);
  if (!array.ok()) return Fail(array.status());
  const DType dtype = (*array)->dtype();
  LogReaderOptions options;
  options.from_sequence = from;
  options.since = *since;
  options.until = *until;
  options.follow = a.tail;
  options.out_of_order = true;  // every valid record printed once, the out-of-place ones reported
  // A log left by another array (the file was replaced) is never decoded
  // with this array's dtype.
  const std::string sidecar = SidecarPath(a.path, a.common.sidecar);
  auto recorded = ReadSidecarIdentity(sidecar);
  auto current = SidecarIdentity::Of(a.path, (*array)->header());
  if (recorded.ok() && current.ok() && !recorded->SameLayout(*current))
    return Fail(Status::InvalidArgument(a.path, "the log in " + sidecar + " belongs to another array (" +
                                                    recorded->Describe() + "; this one is " + current->Describe() +
                                                    "): the next command that opens " + a.path + " sets it aside"));
  auto reader = LogReader::Open(sidecar + "/log", options);
  if (!reader.ok()) {
    if (reader.status().code() == Status::Code::kNotFound && !a.tail) return kExitOk;  // no updates yet
    return Fail(reader.status());
  }
  size_t damage_seen = 0;
  LogRecord r;
  while (!CancelRequested()) {
    auto more = a.tail ? (*reader)->NextWithin(&r, std::chrono::milliseconds(200)) : (*reader)->Next(&r);
    if (!more.ok()) return Fail(more.status());
    for (; damage_seen < (*reader)->damage().size(); ++damage_seen)
      PrintNotice("update log: " + (*reader)->damage()[damage_seen].ToString());
    if (!*more) {
      if (a.tail) continue;
      break;
    }
    const std::string old_text = FormatValue(dtype, LogValueFromRaw(dtype, r.old_raw));
    const std::string new_text = FormatValue(dtype, LogValueFromRaw(dtype, r.new_raw));
    if (a.common.json) {
      JsonWriter j;
      j.BeginObject().Key("seq").UInt(r.sequence).Key("time").Int(r.time).Key("index").UInt(r.index);
      j.Key("old").ElementValue(LogValueFromRaw(dtype, r.old_raw));
      j.Key("new").ElementValue(LogValueFromRaw(dtype, r.new_raw)).EndObject();
      std::printf("%s\n", j.str().c_str());
    } else {
      std::printf("%llu %lld %llu %s %s\n", static_cast<unsigned long long>(r.sequence), static_cast<long long>(r.time),
                  static_cast<unsigned long long>(r.index), old_text.c_str(), new_text.c_str());
    }
    if (a.tail) std::fflush(stdout);
  }
  // Stopped by SIGINT/SIGTERM: the records printed stand, the exit says why.
  return CancelRequested() ? StopExitCode() : kExitOk;
}

}  // namespace

void RegisterLogCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<LogArgs>();
  CLI::App* sub = app.add_subcommand("log", "print an array's update log: SEQ TIME INDEX OLD NEW per line");
  sub->add_option("PATH", a->path, "array file (.npy)")->required();
  sub->add_option("--since", a->since, "only records with time >= T (ms)");
  sub->add_option("--until", a->until, "only records with time < T (ms)");
  sub->add_option("--from", a->from, "only records with sequence >= N (N >= 0: 0, 1000, 2^20)");
  sub->add_flag("--tail", a->tail,
                "follow: keep printing new records as they are appended; waits for the array and its log to appear "
                "(Ctrl-C or SIGTERM stops it: exit 130 / 143)");
  AddCommonOptions(sub, &a->common);
  sub->footer(
      "Example: momenta log big.npy --since 1764460800000 --json\n"
      "Damage and lost records (a segment removed or cut) are reported on stderr with the\n"
      "sequences lost. A valid record out of place (written twice, or behind a later one) is\n"
      "reported with its sequence and offset; one not printed before is printed where it lies.\n"
      "Reads only: the log is never changed (works on read-only media).");
  sub->callback([a, run] { *run = [a] { return RunLog(*a); }; });
}

}  // namespace momenta::cli
