// momenta window: the sliding-window summary of a stream — an array's update
// log, or any "TIMESTAMP ITEM" text — printed at each tick or every T time
// units: the count, the top items with their estimated counts, and quantiles
// (text, or NDJSON with --json). Everything within eps of the exact answer
// (stream/window/summarizer.h).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "storage/array/sidecar.h"
#include "storage/util/cancel.h"
#include "storage/util/json_writer.h"
#include "storage/util/stop_token.h"
#include "stream/drive/log_follow.h"
#include "stream/drive/log_source.h"
#include "stream/drive/log_wait.h"
#include "stream/drive/text_source.h"
#include "stream/drive/window_driver.h"
#include "stream/window/item_mapping.h"
#include "stream/window/name_table.h"
#include "stream/window/summarizer.h"
#include "tools/cli_common.h"
#include "tools/cli_parse.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"

namespace momenta::cli {
namespace {

struct WindowArgs {
  std::string log, input, window, tardiness = "0", every, item = "index", clock = "data";
  std::string sidecar;    // --sidecar DIR: where the --log array's log lives
  std::string quantiles;  // empty: 0.5,0.9,0.99 (none for names)
  double eps = 0;
  size_t top = 10;
  bool follow = false, json = false;
};

// An item as printed: its name (`names`: a "name" mapping), else the integer.
std::string ItemText(int64_t item, const NameTable* names) {
  return names != nullptr ? names->NameOf(item) : std::to_string(item);
}

void PrintReport(const WindowReport& r, bool json, const NameTable* names) {
  if (json) {
    JsonWriter j;
    j.BeginObject().Key("t").Int(r.time).Key("count").Double(r.count);
    j.Key("count_low").UInt(r.count_low).Key("count_high").UInt(r.count_high).Key("dropped").UInt(r.dropped);
    j.Key("top").BeginArray();
    for (const ItemEstimate& e : r.top) {
      j.BeginObject().Key("item");
      if (names != nullptr)
        j.String(names->NameOf(e.item));
      else
        j.Int(e.item);
      j.Key("count").Double(e.count).EndObject();
    }
    j.EndArray().Key("quantiles").BeginArray();
    for (const auto& [phi, v] : r.quantiles) {
      j.BeginObject().Key("phi").Double(phi).Key("value");
      if (v)
        j.Int(*v);
      else
        j.Null();
      j.EndObject();
    }
    j.EndArray().EndObject();
    std::printf("%s\n", j.str().c_str());
    return;
  }
  std::printf("t=%lld count=%.10g dropped=%llu top=", static_cast<long long>(r.time), r.count,
              static_cast<unsigned long long>(r.dropped));
  for (size_t i = 0; i < r.top.size(); ++i)
    std::printf("%s%s:%.10g", i ? "," : "", ItemText(r.top[i].item, names).c_str(), r.top[i].count);
  for (const auto& [phi, v] : r.quantiles) {
    if (v)
      std::printf(" q%g=%lld", phi, static_cast<long long>(*v));
    else
      std::printf(" q%g=none", phi);
  }
  std::printf("\n");
}

// The --input text, or the --log array's update log (followed: waited for
// until it appears, since a monitor may start before the data).
Result<std::unique_ptr<ItemSource>> OpenWindowSource(const WindowArgs& a, const ItemMapping& mapping, bool wall,
                                                     StopToken stop) {
  if (!a.input.empty()) {
    auto text = TextSource::Open(a.input, mapping, wall ? OneWord::kItemNow : OneWord::kRefused, stop);
    if (!text.ok()) return text.status();
    return std::unique_ptr<ItemSource>(std::move(*text));
  }
  std::string log_dir = SidecarPath(a.log, a.sidecar) + "/log";
  if (a.follow) {
    auto found = WaitForLogDir(a.log, a.sidecar, stop, PrintNotice);
    if (!found.ok()) return found.status();
    log_dir = *found;
  }
  auto log = LogSource::Open(log_dir, mapping, a.follow, stop, PrintNotice);
  if (!log.ok()) return log.status();
  return std::unique_ptr<ItemSource>(std::move(*log));
}

int RunWindow(const WindowArgs& a) {
  if (a.log.empty() == a.input.empty()) return UsageFail("give exactly one of --log PATH or --input FILE|-");
  if (a.follow && a.log.empty()) return UsageFail("--follow reads an update log: use it with --log");
  auto window = ParseDuration(a.window, "--window");
  if (!window.ok()) return UsageFail(window.status().ToString());
  auto tardiness = ParseDuration(a.tardiness, "--tardiness");
  if (!tardiness.ok()) return UsageFail(tardiness.status().ToString());
  int64_t every = 0;
  if (!a.every.empty()) {
    auto e = ParseDuration(a.every, "--every");
    if (!e.ok()) return UsageFail(e.status().ToString());
    if (*e < 1) return UsageFail("--every: must be at least 1");
    every = *e;
  }
  if (Status st = CheckEps(a.eps, "--eps"); !st.ok()) return UsageFail(st.ToString());
  auto mapping = ItemMapping::Parse(a.item, "--item");
  if (!mapping.ok()) return UsageFail(mapping.status().ToString());
  const bool named = mapping->kind() == ItemMapping::Kind::kName;
  if (named && !a.log.empty())
    return UsageFail("--item name: an update log's items are indices or values; names come from --input");
  if (named && !a.quantiles.empty())
    return UsageFail("--quantiles: the items are names, which have no order to take quantiles of; leave it out");
  auto phis = ParseFractions(a.quantiles.empty() ? (named ? "" : "0.5,0.9,0.99") : a.quantiles);
  if (!phis.ok()) return UsageFail(phis.status().ToString());
  auto summarizer = Summarizer::Create({*window, *tardiness}, a.eps);
  if (!summarizer.ok()) return UsageFail(summarizer.status().ToString());
  // A followed log runs on its own clock unless --clock wall is asked for.
  const bool wall = a.clock == "wall";
  const bool live = wall || a.follow;
  if (wall && !a.log.empty() && *tardiness == 0)
    return UsageFail(
        "--clock wall on an update log drops every record at --tardiness 0 (each is read after it "
        "is stamped): set --tardiness (e.g. 1s), or leave --clock at data to follow the log's own time");
  if (wall && every == 0) every = 1000;

  InstallCancelHandlers();
  const StopToken stop = StopToken::Cancel();
  auto opened = OpenWindowSource(a, *mapping, wall, stop);
  if (!opened.ok()) return CancelRequested() ? StopExitCode() : Fail(opened.status());
  std::unique_ptr<ItemSource> source = std::move(*opened);
  LogSource* const log = dynamic_cast<LogSource*>(source.get());
  NameTable names;
  if (named)
    source =
        std::make_unique<NotingSource>(std::move(source), [&names](const TimedItem& x) { names.Note(x.item, x.name); });
  const ReportFn report = [&](const Summarizer& s) {
    if (named) names.Prune(s.items());
    PrintReport(s.Report(a.top, *phis), a.json, named ? &names : nullptr);
    if (live) std::fflush(stdout);
  };
  Status st;
  if (wall) {
    if (log != nullptr) st = CatchUpOnLog(*log, *summarizer, stop, PrintNotice);
    if (st.ok()) st = RunWallClock(*source, *summarizer, every, /*end_with_input=*/log == nullptr, report, stop);
  } else if (a.follow) {
    st = RunLogClock(*log, *summarizer, every, report, stop, PrintNotice);
  } else {
    st = RunDataClock(*source, *summarizer, every, report, stop);
  }
  const int rc = st.ok() ? kExitOk : Fail(st);
  if (names.collisions() > 0)
    PrintNotice(Counted(names.collisions(), "name") + " shared a 64-bit hash with another name: counted as one item");
  if (log && log->skipped() > 0)
    PrintNotice(Counted(log->skipped(), "update") + " with a value off the grid (NaN) skipped");
  // Stopped by SIGINT/SIGTERM: the reports so far stand, the exit says why.
  if (rc == kExitOk && CancelRequested()) return StopExitCode();
  return rc;
}

}  // namespace

void RegisterWindowCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<WindowArgs>();
  CLI::App* sub = app.add_subcommand(
      "window", "sliding-window count, top items and quantiles of an update log or a 'TIMESTAMP ITEM' stream");
  sub->add_option("--log", a->log, "array file (.npy): read its update log (times in ms)");
  sub->add_option("--sidecar", a->sidecar,
                  "folder of the --log array's sidecar (default: PATH.momenta, or under $MOMENTA_SIDECAR_DIR)");
  sub->add_option("--input", a->input, "text file of 'TIMESTAMP ITEM' lines, '-' for stdin");
  sub->add_option("--window", a->window,
                  "window length W in time units (or 250ms, 10s, 5m, 2h, 1d: the units then read as milliseconds)")
      ->required();
  FiniteNumber(sub->add_option("--eps", a->eps, "error bound: every answer within eps of the window's count"))
      ->required();
  sub->add_option("--tardiness", a->tardiness, "items may arrive up to T late (T < W); later ones are dropped")
      ->capture_default_str();
  sub->add_option("--item", a->item,
                  "the item: index, index/G (regions of G elements), value/G (grid of width G) or name (--input: "
                  "any word, counted by a 64-bit hash; no quantiles)")
      ->capture_default_str();
  sub->add_option("--every", a->every, "report every T time units instead of at each tick (--clock wall: default 1s)");
  NonNegative(sub->add_option("--top", a->top, "how many top items to print"))->capture_default_str();
  sub->add_option("--quantiles", a->quantiles,
                  "comma-separated fractions to print quantiles for (default 0.5,0.9,0.99; none with --item name)");
  sub->add_option(
         "--clock", a->clock,
         "data: the input's own timestamps (a followed log: its records' times); wall: live, the wall clock in ms")
      ->check(CLI::IsMember({"data", "wall"}))
      ->capture_default_str();
  sub->add_flag("--follow", a->follow,
                "with --log: keep reading new records (waits for the log to appear), on the log's own time");
  sub->add_flag("--json", a->json, "one JSON object per report (NDJSON)");
  sub->footer(
      "Examples:\n"
      "  momenta window --log big.npy --window 1h --eps 0.01 --item index/1000000 --every 1m\n"
      "  tail -f events.txt | momenta window --input - --clock wall --window 60s --eps 0.01 --json\n"
      "  momenta window --log live.npy --follow --window 1m --eps 0.01   # each update counted once logged\n"
      "Durations are plain numbers in the input's time units, or 250ms, 10s, 5m, 2h, 1d, which assume\n"
      "the timestamps are milliseconds (an update log's are).\n"
      "'TIMESTAMP ITEM' input skips blank lines and lines starting with '#'.\n"
      "Ctrl-C (SIGINT) or SIGTERM stops it within a second, also while it waits on a pipe: the reports\n"
      "so far stand, the last one is the state when stopped, and it exits 130 (SIGINT) or 143 (SIGTERM).");
  sub->callback([a, run] { *run = [a] { return RunWindow(*a); }; });
}

}  // namespace momenta::cli
