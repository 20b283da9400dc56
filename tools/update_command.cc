// momenta update: 'INDEX VALUE [TIME]' lines (or binary records) applied to an
// array, its log and its buffer, all or nothing (tools/update_parse.h reads them).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "storage/cancel.h"
#include "tools/buffer_options.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "storage/json_writer.h"
#include "tools/update_parse.h"

namespace momenta::cli {
namespace {

struct UpdateArgs {
  CommonOptions common;
  WriteFlags write;
  std::string path;
  std::string input = "-";
  bool binary = false;
};

// An update stopped by a signal: what was applied is committed, and the
// message says exactly which updates and log sequences that was.
int FailUpdateInterrupted(const Status& interrupted, BufferedArray& ba, uint64_t before_sequence,
                          size_t applied, size_t total) {
  const Status closed = ba.Close();
  const uint64_t after = ba.applied_sequence();
  std::string what;
  if (applied == 0) {
    what = "no update was applied";
  } else {
    what = "applied the first " + std::to_string(applied) + " of " + std::to_string(total) + " updates";
    what += after > before_sequence ? " (log sequences " + std::to_string(before_sequence + 1) + ".." +
                                          std::to_string(after) + ")"
                                    : " (no value changed: nothing logged)";
    what += closed.ok() ? ", the rest not" : ", the rest not; committing them failed: " + closed.ToString();
  }
  return FailInterrupted(interrupted, what);
}

int RunUpdate(const UpdateArgs& a) {
  auto sync = ParseLogSync(a.write.sync, "--sync");
  auto time = ParseTimeFlag(a.write.time);
  if (!sync.ok()) return UsageFail(sync.status().ToString());
  if (!time.ok()) return UsageFail(time.status().ToString());
  InstallCancelHandlers();
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/true, {}, *sync, a.write.retain_ms);
  if (!ba.ok() && ba.status().code() == Status::Code::kInterrupted)
    return FailInterrupted(ba.status(), "no update was applied");  // stopped rebuilding the buffer
  if (!ba.ok()) return Fail(ba.status());
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
    std::fprintf(stderr, "applied %zu updates to %s in %.1f ms\n", updates->size(), a.path.c_str(), micros / 1000);
  }
  return kExitOk;
}

}  // namespace

void RegisterUpdateCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<UpdateArgs>();
  CLI::App* sub = app.add_subcommand("update", "apply 'INDEX VALUE [TIME]' lines (or binary records) to an array, its log and its buffer");
  sub->add_option("PATH", a->path, "array file (.npy)")->required();
  sub->add_option("--input,-i", a->input, "file of updates; - is stdin")->capture_default_str();
  sub->add_flag("--binary", a->binary, "input is 16-byte records: u64 index, f8 value (little-endian)");
  AddWriteFlags(sub, &a->write);
  AddCommonOptions(sub, &a->common);
  sub->footer("Example: printf '10 3.5\\n11 -2\\n' | momenta update big.npy\n"
              "All or nothing: the whole input is read and checked, then log, buffer and array space is\n"
              "reserved for all of it before the first change; a bad line or a full disk changes nothing.\n"
              "Ctrl-C or SIGTERM stops it between chunks of 4096 updates (exit 130/143): what was\n"
              "applied is committed, and the message says which updates and log sequences that was.");
  sub->callback([a, run] { *run = [a] { return RunUpdate(*a); }; });
}

}  // namespace momenta::cli
