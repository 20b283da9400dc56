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

#include "buffers/moments.h"
#include "buffers/statistics.h"
#include "storage/cancel.h"
#include "tools/cli_signals.h"
#include "tools/buffer_options.h"
#include "tools/commands.h"
#include "storage/json_writer.h"
#include "tools/update_parse.h"

namespace momenta::cli {
namespace {

// Shortest round-trip text; NaN is "nan" whatever its sign bit, infinities
// "inf" and "-inf" (as NumPy prints them).
std::string FormatNumber(long double v) {
  if (std::isnan(v)) return "nan";
  char buf[40];
  const double d = static_cast<double>(v);
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

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
};

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
  InstallCancelHandlers();  // a rebuild on open stops at a chunk and removes its tree.new-PID
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/false);
  if (!ba.ok()) return FailOrInterrupted(ba.status());
  auto range = ParseRange(a.range, (*ba)->length());
  if (!range.ok()) {
    if (range.status().code() == Status::Code::kInvalidArgument) return FailParse(range.status());
    return Fail(Status::OutOfRange(a.path, "range " + a.range + " is outside the array (length " +
                                               std::to_string((*ba)->length()) + ")"));
  }
  Stopwatch timer;
  QueryCost cost;
  auto summary = (*ba)->Summarize(range->begin, range->end, NeedsExtremes(stats), &cost);
  for (const auto& n : (*ba)->TakeNotices()) PrintNotice(n);
  if (!summary.ok()) return Fail(summary.status());
  std::vector<StatAnswer> answers;
  for (Stat s : stats) {
    auto answer = ComputeStat(s, params, *summary, range->begin, (*ba)->array().dtype());
    if (!answer.ok()) return Fail(Status::InvalidArgument(a.path, answer.status().ToString()));
    answers.push_back(*answer);
  }
  const double micros = timer.ElapsedMicros();
  auto value_text = [](const StatAnswer& ans, size_t k) {
    return ans.is_integer ? Int128ToString(ans.integer) : FormatNumber(ans.values[k]);
  };
  if (a.common.json) {
    std::string out = "{\"path\":" + JsonWriter().String(a.path).str() + ",\"range\":[" +
                      std::to_string(range->begin) + "," + std::to_string(range->end) + "],\"stats\":{";
    for (size_t s = 0; s < answers.size(); ++s) {
      if (s) out += ',';
      out += JsonWriter().String(StatName(answers[s].stat)).str() + ":";
      const bool list = answers[s].stat == Stat::kMoments || answers[s].stat == Stat::kPolyfit;
      if (list) out += '[';
      for (size_t k = 0; k < answers[s].values.size(); ++k) {
        if (k) out += ',';
        const long double v = answers[s].values[k];
        if (answers[s].is_integer || std::isfinite(v)) out += value_text(answers[s], k);
        else out += JsonWriter().Double(static_cast<double>(v)).str();  // "NaN", "Infinity", "-Infinity"
      }
      if (list) out += ']';
    }
    JsonWriter tail;
    tail.BeginObject().Key("elapsed_us").Double(micros).Key("array_bytes_read").UInt(cost.array_bytes);
    tail.Key("tier_bytes_read").UInt(cost.tier_bytes).Key("read_requests").UInt(cost.requests);
    tail.Key("ram_nodes").UInt(cost.ram_nodes).Key("io").String((*ba)->array().io().Name());
    // What opening cost besides the query: a (re)build or a replay, timed apart.
    const OpenReport& opened = (*ba)->open_report();
    tail.Key("open").BeginObject().Key("rebuilt").Bool(opened.full_pass);
    if (opened.full_pass)
      tail.Key("rebuild_reason").String(opened.full_pass_reason).Key("rebuild_us").Double(opened.full_pass_seconds * 1e6)
          .Key("rebuild_bytes_read").UInt(opened.full_pass_bytes_read);
    tail.Key("replayed").UInt(opened.replayed).Key("recovered").Bool(opened.recovered).EndObject().EndObject();
    out += "}," + tail.str().substr(1) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  }
  for (const StatAnswer& ans : answers) {
    std::string line(StatName(ans.stat));
    for (size_t k = 0; k < ans.values.size(); ++k) line += " " + value_text(ans, k);
    std::printf("%s\n", line.c_str());
  }
  std::fprintf(stderr, "(%.0f us; read %s from the array and %s from the disk tier in %llu requests)\n", micros,
               FormatBytes(cost.array_bytes).c_str(), FormatBytes(cost.tier_bytes).c_str(),
               static_cast<unsigned long long>(cost.requests));
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
  auto ba = OpenBuffered(a.path, a.common, /*writable=*/true, *tree, LogSync::kBatch, -1, /*rebuild_on_open=*/false);
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
    std::fprintf(stderr, "built the moment buffer of %s: read %s of data in %.2f s (%.0f MiB/s)\n",
                 a.path.c_str(), FormatBytes(stats->data_bytes_read).c_str(), stats->seconds, mib_s);
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
    std::fprintf(stderr, "%s: %llu nodes checked, %llu mismatches\n", a.path.c_str(),
                 static_cast<unsigned long long>(report->nodes_checked),
                 static_cast<unsigned long long>(report->mismatches));
  }
  return report->mismatches == 0 ? kExitOk : kExitRuntime;
}

}  // namespace

void RegisterQueryCommands(CLI::App& app, Command* run) {
  {
    auto a = std::make_shared<QueryArgs>();
    CLI::App* sub = app.add_subcommand("query", "range statistics over [P, Q) from the moment buffer");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    sub->add_option("--range,-r", a->range, "half-open slice P:Q (negative counts from the end)")->required();
    sub->add_option("--stat,-s", a->stats,
                    "sum count mean var std moment moments com spread polyfit min max (repeat for several)")
        ->required();
    sub->add_option("--order,-k", a->order,
                    "moment: order K (default 1); moments: orders 0..K (default J); 0 <= K <= the buffer's J")
        ->check(CLI::Range(0, kMaxMomentOrder));
    sub->add_option_function<std::string>(
        "--about,-c", [a](const std::string& c) { a->about = c; },
        "centre c of moment/moments (absolute index, finite; default P)");
    sub->add_option("--degree,-d", a->degree, "polyfit degree (0 <= D <= the buffer's order J)")
        ->check(CLI::Range(0, kMaxMomentOrder))
        ->capture_default_str();
    NonNegative(sub->add_option("--ddof", a->ddof, "var/std: 0 population, 1 sample (>= 0)"))->capture_default_str();
    sub->add_flag("--skipna", a->skipna,
                  "leave NaN cells out, as np.nansum np.nanmean np.nanvar np.nanstd np.nanmin np.nanmax "
                  "(count: the non-NaN cells; infinities are kept)");
    AddCommonOptions(sub, &a->common);
    sub->footer("Example: momenta query big.npy --range 1000:2^30 --stat mean --stat std --stat polyfit --degree 2\n"
                "An empty range gives count 0 and sum 0; statistics that divide by the count fail on it.\n"
                "NaN and infinity are answered as NumPy does: sum mean var std min max as np.sum np.mean np.var\n"
                "np.std np.min np.max (a NaN gives NaN; inf - inf is NaN; var and std with an infinity are NaN).\n"
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
    sub->footer("Example: momenta build big.npy --order 4 --ram-budget 1M\n"
                "Ctrl-C or SIGTERM stops it within a second (exit 130/143); the buffer it had stays.");
    sub->callback([a, run] { *run = [a] { return RunBuild(*a); }; });
  }
  {
    auto a = std::make_shared<VerifyArgs>();
    CLI::App* sub = app.add_subcommand("verify", "recompute the buffer from the array and report mismatches (exit 1 if any)");
    sub->add_option("PATH", a->path, "array file (.npy)")->required();
    AddCommonOptions(sub, &a->common);
    sub->footer("Example: momenta verify big.npy");
    sub->callback([a, run] { *run = [a] { return RunVerify(*a); }; });
  }
  RegisterUpdateCommand(app, run);
}

}  // namespace momenta::cli
