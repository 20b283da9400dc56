// query, build, verify: the commands that use the moment buffer (update, which
// changes the array through it, is update_command.cc; registered here to keep
// --help's order).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "buffers/algebra/moments.h"
#include "buffers/algebra/statistics.h"
#include "storage/util/cancel.h"
#include "storage/util/json_writer.h"
#include "tools/buffer_options.h"
#include "tools/cli_signals.h"
#include "tools/commands.h"
#include "tools/query_answers.h"
#include "tools/query_batch.h"
#include "tools/query_progressive.h"
#include "tools/update_parse.h"

namespace momenta::cli {
namespace {

// ---- query -----------------------------------------------------------------

struct QueryArgs {
  CommonOptions common;
  std::string path;
  std::string range;
  std::vector<std::string> stats;
  int order = -1;
  std::optional<std::string> about;  // --about as given (even empty)
  int degree = 1;
  int ddof = 0;
  bool skipna = false;
  std::string ranges;  // --ranges FILE|-
  std::string on_error = "stop";
  std::optional<uint64_t> bins;      // --bins K (given as 0: refused, not ignored)
  std::optional<uint64_t> bin_size;  // --bin-size N: bins of N elements, the last one shorter
  bool snap = false;
  bool progressive = false;  // --progressive: bounds first, then refinements, then the answer
  bool approx = false;       // --approx: the first bound only (no array read)
};

// Why --progressive / --approx cannot answer this query ("" when it can).
std::string ProgressiveRefusal(const QueryArgs& a, const std::vector<Stat>& stats) {
  const std::string flag = a.approx ? "--approx" : "--progressive";
  if (stats.size() != 1) return "query: " + flag + " answers one --stat at a time (" + kProgressiveStats + ")";
  if (!ServedProgressively(stats[0]))
    return "query: " + flag + " answers " + kProgressiveStats + ", not " + std::string(StatName(stats[0]));
  if (!a.ranges.empty() || a.bins || a.bin_size)
    return "query: " + flag + " answers one --range, not --ranges or --bins";
  if (a.skipna) return "query: " + flag + " does not take --skipna";
  return "";
}

int RunQuery(const QueryArgs& a) {
  std::vector<Stat> stats;
  for (const auto& name : a.stats) {
    auto s = ParseStat(name, "--stat");
    if (!s.ok()) return UsageFail(s.status().ToString());
    stats.push_back(*s);
  }
  StatParams params;
  if (a.order >= 0) params.order = a.order;
  params.degree = a.degree;
  params.ddof = a.ddof;
  params.skipna = a.skipna;
  if (a.about) {
    auto c = ParseFinite(*a.about, "--about");
    if (!c.ok()) return UsageFail(c.status().ToString());
    params.about = *c;
  }
  if (a.range.empty() == a.ranges.empty()) return UsageFail("query: give either --range P:Q or --ranges FILE");
  if (!a.ranges.empty() && (a.bins || a.bin_size))
    return UsageFail(std::string("query: ") + (a.bin_size ? "--bin-size" : "--bins") +
                     " splits one --range, not --ranges");
  if (a.bin_size && *a.bin_size == 0) return UsageFail("query: --bin-size 0: a bin holds at least one element");
  if (a.bins && a.bin_size) return UsageFail("query: give --bins K (how many) or --bin-size N (how long), not both");
  if (a.snap && !a.bins && !a.bin_size) return UsageFail("query: --snap moves the edges of --bins");
  if (a.on_error != "stop" && a.on_error != "skip")
    return UsageFail("--on-error: '" + a.on_error + "' is neither stop nor skip");
  if (a.progressive || a.approx)
    if (const std::string why = ProgressiveRefusal(a, stats); !why.empty()) return UsageFail(why);
  InstallCancelHandlers();  // a rebuild on open stops at a chunk and removes its tree.new-PID
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/false);
  if (!ba.ok()) return FailOrInterrupted(ba.status());
  const QuerySpec spec{a.path, stats, params, a.common.json};
  if (!a.ranges.empty()) return AnswerRangeLines(**ba, spec, a.ranges, a.on_error == "skip");
  auto range = ParseRange(a.range, (*ba)->length());
  if (!range.ok()) {
    if (range.status().code() == Status::Code::kInvalidArgument) return FailParse(range.status());
    return Fail(range.status().WithContext(a.path));
  }
  if (a.bins || a.bin_size) return AnswerBins(**ba, spec, *range, a.bins.value_or(0), a.bin_size.value_or(0), a.snap);
  if (a.progressive || a.approx) return AnswerProgressive(**ba, a.path, stats[0], *range, a.approx, a.common.json);
  Stopwatch timer;
  QueryCost cost;
  auto answers = (*ba)->Stat(range->begin, range->end, stats, params, &cost);  // cost: after merging
  for (const auto& n : (*ba)->TakeNotices()) PrintNotice(n);
  if (!answers.ok()) return Fail(answers.status());
  const double micros = timer.ElapsedMicros();
  if (a.common.json) {
    std::string out = "{\"path\":" + JsonWriter().String(a.path).str() + ",\"range\":" + RangeJson(*range) +
                      ",\"stats\":" + StatsJson(*answers);
    JsonWriter tail;
    tail.BeginObject().Key("elapsed_us").Double(micros).Key("array_bytes_read").UInt(cost.array_bytes);
    tail.Key("tier_bytes_read").UInt(cost.tier_bytes).Key("read_requests").UInt(cost.requests);
    tail.Key("ram_nodes").UInt(cost.ram_nodes).Key("io").String((*ba)->array().io().Name());
    // What opening cost besides the query: a (re)build or a replay, timed apart.
    const OpenReport& opened = (*ba)->open_report();
    tail.Key("open").BeginObject().Key("rebuilt").Bool(opened.full_pass);
    if (opened.full_pass)
      tail.Key("rebuild_reason")
          .String(opened.full_pass_reason)
          .Key("rebuild_us")
          .Double(opened.full_pass_seconds * 1e6)
          .Key("rebuild_bytes_read")
          .UInt(opened.full_pass_bytes_read);
    tail.Key("replayed").UInt(opened.replayed).Key("recovered").Bool(opened.recovered).EndObject().EndObject();
    out += "," + tail.str().substr(1) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  }
  std::printf("%s\n", StatsText(*answers, "\n").c_str());
  std::fprintf(stderr, "(%.0f us; read %s from the array and %s from the disk tier in %s)\n", micros,
               FormatBytes(cost.array_bytes).c_str(), FormatBytes(cost.tier_bytes).c_str(),
               Counted(cost.requests, "request").c_str());
  return kExitOk;
}

// ---- build / verify ----------------------------------------------------------

struct BuildArgs {
  CommonOptions common;
  std::string path;
  BufferFlags buffer;
};

int RunBuild(const BuildArgs& a) {
  auto tree = MakeTreeOptions(a.buffer);
  if (!tree.ok()) return UsageFail(tree.status().ToString());
  InstallCancelHandlers();
  // The build below is the one pass: a stale buffer is not also rebuilt by Open.
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/true, *tree, {}, /*rebuild_on_open=*/false);
  if (!ba.ok()) return FailOrInterrupted(ba.status());
  Progress bar("build " + a.path, (*ba)->array().length() * (*ba)->array().itemsize());
  auto stats = (*ba)->Rebuild(*tree, [&bar](uint64_t done, uint64_t) { bar.Update(done); });
  bar.Finish();
  if (!stats.ok()) return FailOrInterrupted(stats.status());
  const double mib_s = stats->seconds > 0 ? stats->data_bytes_read / stats->seconds / (1 << 20) : 0;
  if (a.common.json) {
    JsonWriter j;
    j.BeginObject().Key("path").String(a.path).Key("data_bytes_read").UInt(stats->data_bytes_read);
    j.Key("leaves_with_data").UInt(stats->leaves_with_data).Key("seconds").Double(stats->seconds);
    j.Key("mib_per_s").Double(mib_s).EndObject();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr, "built the moment buffer of %s: read %s of data in %.2f s (%.0f MiB/s)\n", a.path.c_str(),
                 FormatBytes(stats->data_bytes_read).c_str(), stats->seconds, mib_s);
  }
  return kExitOk;
}

struct VerifyArgs {
  CommonOptions common;
  std::string path;
};

int RunVerify(const VerifyArgs& a) {
  InstallCancelHandlers();  // a rebuild on open stops at a chunk and removes its tree.new-PID
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/false);
  if (!ba.ok()) return FailOrInterrupted(ba.status());
  auto report = (*ba)->Verify();
  if (!report.ok()) return FailOrInterrupted(report.status());
  if (a.common.json) {
    JsonWriter j;
    j.BeginObject().Key("path").String(a.path).Key("nodes_checked").UInt(report->nodes_checked);
    j.Key("mismatches").UInt(report->mismatches).Key("examples").BeginArray();
    for (const auto& e : report->examples) j.String(e);
    j.EndArray().EndObject();
    std::printf("%s\n", j.str().c_str());
  } else {
    for (const auto& e : report->examples) std::printf("mismatch: %s\n", e.c_str());
    std::fprintf(stderr, "%s: %s checked, %s\n", a.path.c_str(), Counted(report->nodes_checked, "node").c_str(),
                 Counted(report->mismatches, "mismatch", "mismatches").c_str());
  }
  return report->mismatches == 0 ? kExitOk : kExitRuntime;
}

}  // namespace

void RegisterQueryCommands(CLI::App& app, Command* run) {
  {
    auto a = std::make_shared<QueryArgs>();
    CLI::App* sub = app.add_subcommand("query", "range statistics over [P, Q) from the moment buffer");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    sub->add_option("--range,-r", a->range,
                    "half-open range P:Q, written like a NumPy slice (negative counts from the end; 1000, 2^30, "
                    "3*2^20) but never clipped or emptied: P > Q or a side past the end is refused");
    sub->add_option("--ranges", a->ranges,
                    "FILE or - (stdin): one range per line, P:Q or {\"range\":[P,Q],\"stat\":[...]}; "
                    "one answer per line, in order, each batch of ready lines read together");
    sub->add_option("--on-error", a->on_error,
                    "--ranges: stop at a bad line (default), or skip: answer it with its error, exit 1 at the end");
    NonNegative(sub->add_option("--bins", a->bins,
                                "split --range into K equal bins, 1 <= K <= Q - P (1000, 2^10), and answer each (an "
                                "overview: one line per bin)"));
    NonNegative(
        sub->add_option("--bin-size", a->bin_size,
                        "split --range into bins of N elements from P (1024, 2^10), the last one shorter (frames)"));
    sub->add_flag("--snap", a->snap, "--bins: move each edge to the nearest leaf boundary (no raw element is read)");
    sub->add_option("--stat,-s", a->stats,
                    "sum count mean var std moment moments com spread polyfit min max sumsq rms (repeat for several)")
        ->required();
    CountIn(sub->add_option("--order,-k", a->order,
                            "moment: order K (default 1); moments: orders 0..K (default J); 0 <= K <= the buffer's J"),
            0, kMaxMomentOrder);
    sub->add_option_function<std::string>(
        "--about,-c", [a](const std::string& c) { a->about = c; },
        "center c of moment/moments (absolute index, finite; default P)");
    CountIn(sub->add_option("--degree,-d", a->degree, "polyfit degree (0 <= D <= the buffer's order J)"), 0,
            kMaxMomentOrder)
        ->capture_default_str();
    NonNegative(sub->add_option("--ddof", a->ddof, "var/std: 0 population, 1 sample (>= 0)"), INT32_MAX)
        ->capture_default_str();
    sub->add_flag(
        "--progressive", a->progressive,
        "sum, count, mean, sumsq or rms: an estimate with an interval that holds the exact answer first, from "
        "the buffer alone, then narrower ones as the end leaves are read, ending with the answer");
    sub->add_flag("--approx", a->approx,
                  "sum, count, mean, sumsq or rms: only the first line of --progressive (reads no byte of the array)");
    sub->add_flag("--skipna", a->skipna,
                  "leave NaN cells out, as np.nansum np.nanmean np.nanvar np.nanstd np.nanmin np.nanmax "
                  "(count: the non-NaN cells; infinities are kept)");
    AddCommonOptions(sub, &a->common);
    sub->footer(
        "Example: momenta query big.npy --range 1000:2^30 --stat mean --stat std --stat polyfit --degree 2\n"
        "         momenta query big.npy --ranges ranges.txt --stat sum --json\n"
        "         momenta query big.npy --range 0:2^40 --bins 1000 --snap --stat mean --stat min --stat max\n"
        "         momenta query big.npy --range 1000:2^30 --stat sum --progressive --json\n"
        "         momenta query audio.npy --range 0:900000 --bin-size 1024 --stat rms\n"
        "An empty range gives count 0 and sum 0; statistics that divide by the count fail on it.\n"
        "Unlike a NumPy slice, a range is never clipped or emptied (500:100 or 0:2^40 on a shorter array\n"
        "is refused, saying which side is wrong): a statistic of another range would be a wrong answer.\n"
        "Bytes read are what was asked of the devices, a batch's overlapping reads merged; --ranges and\n"
        "--bins end with one line on stderr (with --json a JSON object) of the ranges, the bytes they\n"
        "cover and the bytes read.\n"
        "NaN and infinity are answered as NumPy does: sum mean var std min max as np.sum np.mean np.var\n"
        "np.std np.min np.max (a NaN gives NaN; inf - inf is NaN; var and std with an infinity are NaN);\n"
        "sumsq and rms as np.sum(y) and np.sqrt(np.mean(y)), y = x.astype(float64)**2 (an infinity gives inf).\n"
        "moment moments com spread polyfit are NaN whenever the range holds a NaN or an infinity that\n"
        "is not skipped (polyfit: any NaN, even with --skipna). Text prints nan, inf, -inf; --json\n"
        "prints the strings \"NaN\", \"Infinity\", \"-Infinity\".");
    sub->callback([a, run] { *run = [a] { return RunQuery(*a); }; });
  }
  {
    auto a = std::make_shared<BuildArgs>();
    CLI::App* sub = app.add_subcommand("build", "(re)build an array's moment buffer");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    AddBufferFlags(sub, &a->buffer);
    AddCommonOptions(sub, &a->common);
    sub->footer(
        "Example: momenta build big.npy --order 4 --ram-budget 1M\n"
        "Ctrl-C or SIGTERM stops it within a second (exit 130/143); the buffer it had stays.");
    sub->callback([a, run] { *run = [a] { return RunBuild(*a); }; });
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    CLI::App* sub =
        app.add_subcommand("verify", "recompute the buffer from the array and report mismatches (exit 1 if any)");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    AddCommonOptions(sub, &a->common);
    sub->footer("Example: momenta verify big.npy");
    sub->callback([a, run] { *run = [a] { return RunVerify(*a); }; });
  }
  RegisterUpdateCommand(app, run);
}

}  // namespace momenta::cli
