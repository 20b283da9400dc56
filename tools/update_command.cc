// momenta update: 'INDEX VALUE [TIME]' lines (or binary records) applied to an
// array, its log and its buffer, all or nothing (tools/update_parse.h reads them).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "storage/util/cancel.h"
#include "storage/util/json_writer.h"
#include "storage/util/line_reader.h"
#include "tools/buffer_options.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/update_follow.h"
#include "tools/update_parse.h"

namespace momenta::cli {
namespace {

struct UpdateArgs {
  CommonOptions common;
  WriteFlags write;
  std::string path;
  std::string input = "-";
  bool binary = false;
  // --follow and its flags (tools/update_follow.h)
  bool follow = false;
  std::string max_delay = "10ms";
  size_t group = 65536;
  bool ack = false;
  std::string on_error = "stop";
};

// An update stopped by a signal: what was applied is committed, and the
// message says exactly which updates and log sequences that was.
int FailUpdateInterrupted(const Status& interrupted, BufferedArray& ba, uint64_t before_sequence, size_t applied,
                          size_t total) {
  const Status closed = ba.Close();
  const uint64_t after = ba.applied_sequence();
  std::string what;
  if (applied == 0) {
    what = "no update was applied";
  } else {
    what = "applied the first " + std::to_string(applied) + " of " + Counted(total, "update");
    what += after > before_sequence
                ? " (log sequences " + std::to_string(before_sequence + 1) + ".." + std::to_string(after) + ")"
                : " (no value changed: nothing logged)";
    what += closed.ok() ? ", the rest not" : ", the rest not; committing them failed: " + closed.ToString();
  }
  return FailInterrupted(interrupted, what);
}

// --follow: lines applied as they arrive, in group commits.
int RunFollow(const UpdateArgs& a, BufferedArray& ba, int64_t time, int64_t max_delay_ms) {
  auto in = LineReader::Open(a.input, StopToken::Cancel());
  if (!in.ok()) return Fail(in.status());
  FollowOptions options;
  options.max_delay_ms = max_delay_ms;
  options.group = a.group;
  options.ack = a.ack;
  options.json = a.common.json;
  options.skip_bad = a.on_error == "skip";
  options.time = time;
  FollowStats stats;
  Stopwatch timer;
  const Status s = FollowUpdates(ba, **in, options, &stats);
  const Status closed = ba.Close();
  if (!s.ok()) return FailOrInterrupted(s);
  if (!closed.ok()) return Fail(closed);
  const std::string skipped = stats.skipped > 0 ? ", skipped " + Counted(stats.skipped, "bad line") : "";
  std::fprintf(stderr, "applied %s to %s in %s in %.1f ms%s\n", Counted(stats.updates, "update").c_str(),
               a.path.c_str(), Counted(stats.groups, "group").c_str(), timer.ElapsedMicros() / 1000, skipped.c_str());
  return kExitOk;
}

int RunUpdate(const UpdateArgs& a) {
  auto log = ParseLogChoice(a.write);
  auto time = ParseTimeFlag(a.write.time);
  if (!log.ok()) return UsageFail(log.status().ToString());
  if (!time.ok()) return UsageFail(time.status().ToString());
  if (a.on_error != "stop" && a.on_error != "skip")
    return UsageFail("--on-error: '" + a.on_error + "' is neither stop nor skip");
  if (a.follow && a.binary) return UsageFail("--follow reads text lines; --binary records are not followed");
  if (!a.follow && (a.ack || a.on_error != "stop"))
    return UsageFail(std::string(a.ack ? "--ack" : "--on-error skip") + " needs --follow");
  if (a.group == 0) return UsageFail("--group must be at least 1");
  auto max_delay = ParseDuration(a.max_delay, "--max-delay");
  if (!max_delay.ok()) return UsageFail(max_delay.status().ToString());
  InstallCancelHandlers();
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/true, {}, *log);
  if (!ba.ok() && ba.status().code() == Status::Code::kInterrupted)
    return FailInterrupted(ba.status(), "no update was applied");  // stopped rebuilding the buffer
  if (!ba.ok()) return Fail(ba.status());
  if (a.follow) return RunFollow(a, **ba, *time, *max_delay);
  auto text = ReadWholeInput(a.input);
  if (!text.ok()) {
    if (text.status().code() == Status::Code::kInterrupted)
      return FailUpdateInterrupted(text.status(), **ba, (*ba)->applied_sequence(), 0, 0);
    return Fail(text.status());
  }
  const std::string name = a.input == "-" ? "stdin" : a.input;
  auto updates = ParseUpdates(*text, a.binary, name, (*ba)->array().dtype(), (*ba)->length(), *time);
  if (!updates.ok()) {
    if (updates.status().code() == Status::Code::kInterrupted)
      return FailUpdateInterrupted(updates.status(), **ba, (*ba)->applied_sequence(), 0, 0);
    return Fail(updates.status());
  }
  Stopwatch timer;
  // The whole input is one all-or-nothing Apply (on a full disk nothing
  // changes); a signal stops it between two chunks, consistent.
  const uint64_t before_sequence = (*ba)->applied_sequence();
  size_t applied = 0;
  if (Status s = (*ba)->Apply(*updates, &applied); !s.ok()) {
    if (s.code() == Status::Code::kInterrupted)
      return FailUpdateInterrupted(s, **ba, before_sequence, applied, updates->size());
    return Fail(s);
  }
  if (Status s = (*ba)->Close(); !s.ok()) return Fail(s);
  const double micros = timer.ElapsedMicros();
  if (a.common.json) {
    JsonWriter j;
    j.BeginObject().Key("path").String(a.path).Key("updates").UInt(updates->size());
    j.Key("elapsed_us").Double(micros).EndObject();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr, "applied %s to %s in %.1f ms\n", Counted(updates->size(), "update").c_str(), a.path.c_str(),
                 micros / 1000);
  }
  return kExitOk;
}

}  // namespace

void RegisterUpdateCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<UpdateArgs>();
  CLI::App* sub = app.add_subcommand(
      "update", "apply 'INDEX VALUE [TIME]' lines (or binary records) to an array, its log and its buffer");
  sub->add_option("PATH", a->path, "array file (.npy)")->required();
  sub->add_option("--input,-i", a->input, "file of updates; - is stdin")->capture_default_str();
  sub->add_flag("--binary", a->binary, "input is 16-byte records: u64 index, f8 value (little-endian)");
  sub->add_flag("--follow", a->follow,
                "apply lines as they arrive, in group commits (a group closes after --max-delay or --group)");
  sub->add_option("--max-delay", a->max_delay,
                  "with --follow: longest a line waits for its group to close (e.g. 10ms, 1s; a bare number is ms)")
      ->capture_default_str();
  NonNegative(sub->add_option("--group", a->group, "with --follow: most updates in one group (e.g. 2^16)"))
      ->capture_default_str();
  sub->add_flag(
      "--ack", a->ack,
      "with --follow: print 'SEQ COUNT' per group once it is durable per --sync ({\"seq\",\"count\"} with --json)");
  sub->add_option("--on-error", a->on_error, "with --follow: a bad line stops (stop) or is reported and skipped (skip)")
      ->capture_default_str();
  AddWriteFlags(sub, &a->write);
  AddCommonOptions(sub, &a->common);
  sub->footer(
      "Example: printf '10 3.5\\n11 -2\\n' | momenta update big.npy\n"
      "All or nothing: the whole input is read and checked, then log, buffer and array space is\n"
      "reserved for all of it before the first change; a bad line or a full disk changes nothing.\n"
      "Ctrl-C or SIGTERM stops it between chunks of 4096 updates (exit 130/143): what was\n"
      "applied is committed, and the message says which updates and log sequences that was.\n"
      "With --follow, lines are applied as they arrive: producer | momenta update big.npy --follow --ack\n"
      "prints 'SEQ COUNT' once each group is durable (--sync always|batch; none: applied only);\n"
      "an acknowledged update survives a crash, an unacknowledged one may or may not.");
  sub->callback([a, run] { *run = [a] { return RunUpdate(*a); }; });
}

}  // namespace momenta::cli
