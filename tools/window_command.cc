// momenta window: the sliding-window summary of a stream — an array's update
// log, or any "TIMESTAMP ITEM" text — printed at each tick or every T time
// units: the count, the top items with their estimated counts, and quantiles
// (text, or NDJSON with --json). Everything within eps of the exact answer
// (stream/window/summarizer.h).
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "storage/log_codec.h"
#include "storage/log_reader.h"
#include "storage/log_segments.h"
#include "storage/sidecar.h"
#include "stream/window/item_mapping.h"
#include "stream/window/summarizer.h"
#include "tools/commands.h"
#include "tools/json.h"
#include "tools/stop_signals.h"
#include "tools/stream_input.h"

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

// "TIMESTAMP ITEM" lines from a file or stdin; in live mode a line may be a
// bare ITEM, stamped with the wall clock.
class LineSource : public Source {
 public:
  LineSource(int fd, std::string name, ItemMapping mapping, bool live)
      : lines_(fd, std::move(name)), mapping_(mapping), live_(live) {}
  Result<bool> Next(int64_t* ts, int64_t* item, std::chrono::milliseconds wait) override {
    while (true) {
      std::string_view line;
      auto got = lines_.Next(&line, live_ ? wait : std::chrono::milliseconds(-1));
      if (!got.ok()) return got.status();
      if (*got == LineBuffer::Got::kEnd) return false;
      if (*got == LineBuffer::Got::kNothing) {
        if (live_ || StopRequested()) return false;
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (live_ && line.find_first_of(" \t", line.find_first_not_of(" \t")) == std::string_view::npos) {
        auto it = mapping_.FromText(line.substr(line.find_first_not_of(" \t")));
        if (!it.ok()) return Status::InvalidArgument(lines_.where(), it.status().ToString());
        *ts = WallMillis();
        *item = *it;
        return true;
      }
      MOMENTA_RETURN_IF_ERROR(ParseTimedItem(line, mapping_, lines_.name(), lines_.line_number(), ts, item));
      return true;
    }
  }
  bool finished() const { return lines_.finished(); }

 private:
  LineBuffer lines_;
  ItemMapping mapping_;
  bool live_;
};

// The data's own clock: time is the largest timestamp seen. A tick is
// reported once an item stamped later arrives (or the input ends); with
// `every`, the state at each multiple of `every` instead.
int RunDataClock(Source& source, Summarizer& s, int64_t every, size_t top, const std::vector<double>& phis,
                 bool json) {
  bool any = false;
  int64_t next = 0;  // the next report time under --every
  int64_t ts = 0, item = 0;
  while (!StopRequested()) {
    auto more = source.Next(&ts, &item, std::chrono::milliseconds(0));
    if (!more.ok()) return Fail(more.status());
    if (!*more) break;
    if (!any) {
      any = true;
      if (every > 0) next = ts >= 0 ? (ts + every - 1) / every * every : -((-ts) / every * every);
      s.AdvanceTo(ts);
    }
    if (every > 0) {
      while (ts > next) {
        s.AdvanceTo(std::max(next, s.now()));
        PrintReport(s.Report(top, phis), json);
        next += every;
      }
    } else if (ts > s.now()) {
      PrintReport(s.Report(top, phis), json);
    }
    s.Add(ts, item);
  }
  if (!any) return kExitOk;
  if (every > 0) {
    // The last multiple reached, then (if time went on past it) the end.
    if (s.now() >= next) {
      s.AdvanceTo(next);
      PrintReport(s.Report(top, phis), json);
    } else if (s.now() > next - every) {
      PrintReport(s.Report(top, phis), json);
    }
  } else {
    PrintReport(s.Report(top, phis), json);
  }
  return kExitOk;
}

// Live: the wall clock in milliseconds; a report every `every` ms whether or
// not anything arrives (items leave the window as time passes). Items
// stamped in the future count as stamped now.
int RunWallClock(Source& source, Summarizer& s, int64_t every, size_t top, const std::vector<double>& phis,
                 bool json, const LineSource* lines) {
  int64_t next = WallMillis() / every * every + every;
  s.AdvanceTo(WallMillis());
  int64_t ts = 0, item = 0;
  while (!StopRequested()) {
    const int64_t now = WallMillis();
    if (now >= next) {
      s.AdvanceTo(std::max(now, s.now()));
      PrintReport(s.Report(top, phis), json);
      std::fflush(stdout);
      next = now / every * every + every;
      continue;
    }
    auto more = source.Next(&ts, &item, std::chrono::milliseconds(next - now));
    if (!more.ok()) return Fail(more.status());
    if (!*more) {
      if (lines && lines->finished()) break;
      continue;
    }
    const int64_t at = WallMillis();
    s.AdvanceTo(std::max(at, s.now()));
    s.Add(std::min(ts, s.now()), item);
  }
  s.AdvanceTo(std::max(WallMillis(), s.now()));
  PrintReport(s.Report(top, phis), json);
  return kExitOk;
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
  auto mapping = ItemMapping::Parse(a.item);
  if (!mapping.ok()) return UsageFail(mapping.status().ToString());
  auto phis = ParseFractions(a.quantiles);
  if (!phis.ok()) return UsageFail(phis.status().ToString());
  auto summarizer = Summarizer::Create({*window, *tardiness}, a.eps);
  if (!summarizer.ok()) return UsageFail(summarizer.status().ToString());
  const bool live = a.clock == "wall" || a.follow;
  if (live && every == 0) every = 1000;

  InstallStopSignals();
  std::unique_ptr<Source> source;
  const LineSource* lines = nullptr;
  if (!a.input.empty()) {
    int fd = 0;
    if (a.input != "-") {
      fd = open(a.input.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return Fail(Status::FromErrno(a.input, errno));
    }
    auto ls = std::make_unique<LineSource>(fd, a.input == "-" ? "stdin" : a.input, *mapping, live);
    lines = ls.get();
    source = std::move(ls);
  } else {
    LogReaderOptions options;
    options.follow = a.follow;
    auto reader = LogReader::Open(SidecarPath(a.log, a.sidecar) + "/log", options);
    if (!reader.ok()) return Fail(reader.status());
    source = std::make_unique<LogSource>(std::move(*reader), *mapping, a.follow);
  }
  const int rc = live ? RunWallClock(*source, *summarizer, every, a.top, *phis, a.json, lines)
                      : RunDataClock(*source, *summarizer, every, a.top, *phis, a.json);
  if (auto* log = dynamic_cast<LogSource*>(source.get()); log && log->skipped() > 0)
    PrintNotice(std::to_string(log->skipped()) + " update(s) with a value off the grid (NaN) skipped");
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
  sub->add_option("--eps", a->eps, "error bound: every answer within eps of the window's count")->required();
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
