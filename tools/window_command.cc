// momenta window: the sliding-window summary of a stream — an array's update
// log, or any "TIMESTAMP ITEM" text — printed at each tick or every T time
// units: the count, the top items with their estimated counts, and quantiles
// (text, or NDJSON with --json). Everything within eps of the exact answer
// (stream/window/summarizer.h).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "storage/sidecar.h"
#include "stream/drive/log_source.h"
#include "stream/drive/text_source.h"
#include "stream/drive/window_driver.h"
#include "stream/window/item_mapping.h"
#include "stream/window/summarizer.h"
#include "tools/cli_common.h"
#include "tools/cli_parse.h"
#include "tools/commands.h"
#include "storage/json_writer.h"
#include "tools/stop_signals.h"

namespace momenta::cli {
namespace {

struct WindowArgs {
  std::string log, input, window, tardiness = "0", every, item = "index", clock = "data";
  std::string sidecar;  // --sidecar DIR: where the --log array's log lives
  std::string quantiles = "0.5,0.9,0.99";
  double eps = 0;
  size_t top = 10;
  bool follow = false, json = false;
};

void PrintReport(const WindowReport& r, bool json) {
  if (json) {
    JsonWriter j;
    j.BeginObject().Key("t").Int(r.time).Key("count").Double(r.count);
    j.Key("count_low").UInt(r.count_low).Key("count_high").UInt(r.count_high).Key("dropped").UInt(r.dropped);
    j.Key("top").BeginArray();
    for (const ItemEstimate& e : r.top) j.BeginObject().Key("item").Int(e.item).Key("count").Double(e.count).EndObject();
    j.EndArray().Key("quantiles").BeginArray();
    for (const auto& [phi, v] : r.quantiles) {
      j.BeginObject().Key("phi").Double(phi).Key("value");
      if (v) j.Int(*v); else j.Null();
      j.EndObject();
    }
    j.EndArray().EndObject();
    std::printf("%s\n", j.str().c_str());
    return;
  }
  std::printf("t=%lld count=%.10g dropped=%llu top=", static_cast<long long>(r.time), r.count,
              static_cast<unsigned long long>(r.dropped));
  for (size_t i = 0; i < r.top.size(); ++i)
    std::printf("%s%lld:%.10g", i ? "," : "", static_cast<long long>(r.top[i].item), r.top[i].count);
  for (const auto& [phi, v] : r.quantiles) {
    if (v) std::printf(" q%g=%lld", phi, static_cast<long long>(*v));
    else std::printf(" q%g=none", phi);
  }
  std::printf("\n");
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
  auto phis = ParseFractions(a.quantiles);
  if (!phis.ok()) return UsageFail(phis.status().ToString());
  auto summarizer = Summarizer::Create({*window, *tardiness}, a.eps);
  if (!summarizer.ok()) return UsageFail(summarizer.status().ToString());
  const bool live = a.clock == "wall" || a.follow;
  if (live && every == 0) every = 1000;

  InstallStopSignals();
  const StopToken stop = SignalStopToken();
  std::unique_ptr<ItemSource> source;
  LogSource* log = nullptr;
  if (!a.input.empty()) {
    auto opened = TextSource::Open(a.input, *mapping, live ? OneWord::kItemNow : OneWord::kRefused, stop);
    if (!opened.ok()) return Fail(opened.status());
    source = std::move(*opened);
  } else {
    auto opened = LogSource::Open(SidecarPath(a.log, a.sidecar) + "/log", *mapping, a.follow, stop, PrintNotice);
    if (!opened.ok()) return Fail(opened.status());
    log = opened->get();
    source = std::move(*opened);
  }
  const ReportFn report = [&](const Summarizer& s) {
    PrintReport(s.Report(a.top, *phis), a.json);
    if (live) std::fflush(stdout);
  };
  const Status st = live ? RunWallClock(*source, *summarizer, every, /*end_with_input=*/log == nullptr, report, stop)
                         : RunDataClock(*source, *summarizer, every, report, stop);
  const int rc = st.ok() ? kExitOk : Fail(st);
  if (log && log->skipped() > 0)
    PrintNotice(Counted(log->skipped(), "update") + " with a value off the grid (NaN) skipped");
  // Stopped by SIGINT/SIGTERM: the reports so far stand, the exit says why.
  if (rc == kExitOk && StopRequested()) return StopExitCode();
  return rc;
}

}  // namespace

void RegisterWindowCommand(CLI::App& app, Command* run) {
  auto a = std::make_shared<WindowArgs>();
  CLI::App* sub = app.add_subcommand(
      "window", "sliding-window count, top items and quantiles of an update log or a 'TIMESTAMP ITEM' stream");
  sub->add_option("--log", a->log, "array file (.npy): read its update log (times in ms)");
  sub->add_option("--sidecar", a->sidecar, "folder of the --log array's sidecar (default: PATH.momenta, or under $MOMENTA_SIDECAR_DIR)");
  sub->add_option("--input", a->input, "text file of 'TIMESTAMP ITEM' lines, '-' for stdin");
  sub->add_option("--window", a->window, "window length W in time units (or 250ms, 10s, 5m, 2h, 1d)")->required();
  FiniteNumber(sub->add_option("--eps", a->eps, "error bound: every answer within eps of the window's count"))
      ->required();
  sub->add_option("--tardiness", a->tardiness, "items may arrive up to T late (T < W); later ones are dropped")
      ->capture_default_str();
  sub->add_option("--item", a->item, "the item: index, index/G (regions of G elements) or value/G (grid of width G)")
      ->capture_default_str();
  sub->add_option("--every", a->every, "report every T time units instead of at each tick (live: default 1s)");
  NonNegative(sub->add_option("--top", a->top, "how many top items to print"))->capture_default_str();
  sub->add_option("--quantiles", a->quantiles, "comma-separated fractions to print quantiles for")
      ->capture_default_str();
  sub->add_option("--clock", a->clock, "data: the input's own timestamps; wall: live, the wall clock in ms")
      ->check(CLI::IsMember({"data", "wall"}))
      ->capture_default_str();
  sub->add_flag("--follow", a->follow, "with --log: keep reading new records, on the wall clock");
  sub->add_flag("--json", a->json, "one JSON object per report (NDJSON)");
  sub->footer(
      "Examples:\n"
      "  momenta window --log big.npy --window 1h --eps 0.01 --item index/1000000 --every 1m\n"
      "  tail -f events.txt | momenta window --input - --clock wall --window 60s --eps 0.01 --json\n"
      "Ctrl-C (SIGINT) or SIGTERM stops it within a second, also while it waits on a pipe: the reports\n"
      "so far stand, the last one is the state when stopped, and it exits 130 (SIGINT) or 143 (SIGTERM).");
  sub->callback([a, run] { *run = [a] { return RunWindow(*a); }; });
}

}  // namespace momenta::cli
