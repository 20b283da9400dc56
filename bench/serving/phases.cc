#include "bench/serving/phases.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"

namespace momenta::serving {
namespace {

std::unique_ptr<BufferedArray> OpenReader(const Context& ctx, bool cache_first) {
  BufferedArrayOptions options;
  options.io.cache_first = cache_first;
  if (!cache_first) options.io.direct_min_bytes = 0;  // every aligned read O_DIRECT
  return Must(BufferedArray::Open(ctx.flags.array, options), "open a reader");
}

double TimeQuery(BufferedArray& ba, const Range& r) {
  const double start = Seconds();
  Must(ba.Summarize(r.p, r.q, false).status(), "query");
  return Seconds() - start;
}

void Row(const std::string& what, const std::string& figure, const std::string& reference, double ratio) {
  std::printf("| %s | %s | %s | %s |\n", what.c_str(), figure.c_str(), reference.c_str(),
              ratio > 0 ? (std::to_string(ratio).substr(0, 5) + "x").c_str() : "");
  std::fflush(stdout);
}
std::string Us(double seconds) { return std::to_string(static_cast<long long>(std::llround(seconds * 1e6))) + " us"; }
std::string Ms(double seconds) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f ms", seconds * 1e3);
  return b;
}
std::string PerSecond(double n) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f/s", n);
  return b;
}

// sum, mean and var of a summary, to compare two answers exactly.
std::vector<long double> Key(const RangeSummary& s, uint64_t p) {
  std::vector<long double> out;
  for (Stat stat : {Stat::kSum, Stat::kMean, Stat::kVar}) {
    auto a = ComputeStat(stat, StatParams{}, s, p, DType::kF8);
    out.push_back(a.ok() ? a->values[0] : -1);
  }
  return out;
}

// The first `count` answers of a batch against single queries asked the same
// way (with extremes or not: the two read different sides of the end leaves).
void CheckAgainstSingles(Context& ctx, BufferedArray& ba, const std::vector<IndexRange>& ranges,
                         const std::vector<RangeSummary>& got, size_t count, bool extremes, const char* what) {
  for (size_t k = 0; k < ranges.size() && k < count; ++k) {
    auto one = Must(ba.Summarize(ranges[k].begin, ranges[k].end, extremes), "check query");
    if (Key(one, ranges[k].begin) != Key(got[k], ranges[k].begin)) {
      std::printf("WRONG: %s range %llu:%llu differs from its single query\n", what,
                  static_cast<unsigned long long>(ranges[k].begin), static_cast<unsigned long long>(ranges[k].end));
      ctx.correct = false;
    }
  }
}

std::vector<Range> KindZero(const Context& ctx, uint64_t count) {
  std::vector<Range> all =
      DrawRanges(ctx.flags.array, ctx.length, 2 * count, uint64_t{1} << ctx.flags.min_len_log2, ctx.flags.seed + 7);
  std::vector<Range> out;
  for (const Range& r : all)
    if (r.kind == 0) out.push_back(r);
  return out;
}

}  // namespace

void RunInProcess(Context& ctx) {
  auto first = OpenReader(ctx, true), direct = OpenReader(ctx, false);
  std::vector<double> cold[2][2], warm[2][2];       // [kind][cache_first]
  for (size_t k = 0; k < ctx.ranges.size(); ++k) {  // which goes first alternates
    const Range& r = ctx.ranges[k];
    for (int turn = 0; turn < 2; ++turn) {
      const bool cache_first = (turn + k / 2) % 2 == 0;
      DropCaches(ctx.flags.array, ctx.sidecar);
      cold[r.kind][cache_first].push_back(TimeQuery(cache_first ? *first : *direct, r));
    }
  }
  for (const Range& r : ctx.ranges) {
    WarmEnds(ctx.flags.array, *first, r);
    Must(direct->Summarize(r.p, r.q, false).status(), "warm-up");
    std::vector<double> on, off;
    for (int k = 0; k < 11; ++k) {
      on.push_back(TimeQuery(*first, r));
      off.push_back(TimeQuery(*direct, r));
    }
    warm[r.kind][1].push_back(Median(on));
    warm[r.kind][0].push_back(Median(off));
  }
  const char* kinds[2] = {"ends in data", "ends anywhere (mostly holes: no I/O)"};
  for (int kind = 0; kind < 2; ++kind) {
    const double on = Median(cold[kind][1]), off = Median(cold[kind][0]);
    Row(std::string("in-process cold p50, ") + kinds[kind] + "; page cache first vs O_DIRECT only", Us(on), Us(off),
        on / off);
  }
  for (int kind = 0; kind < 2; ++kind) {
    const double on = Median(warm[kind][1]), off = Median(warm[kind][0]);
    Row(std::string("in-process warm p50, ") + kinds[kind] + "; page cache first vs O_DIRECT only", Us(on), Us(off),
        on / off);
  }
}

void RunCli(Context& ctx) {
  auto ba = OpenReader(ctx, true);
  std::vector<double> version, warm, cold, warm_inside, cold_inside, warm_engine, cold_engine, opens, firsts;
  auto inside = [](const std::string& json) {
    const size_t at = json.find("\"elapsed_us\":");
    return at == std::string::npos ? 0.0 : std::atof(json.c_str() + at + 13) * 1e-6;
  };
  std::string out;
  for (uint64_t k = 0; k < ctx.flags.cli_runs; ++k) {
    const Range& r = ctx.ranges[(2 * k) % ctx.ranges.size()];  // kind 0: data at both ends
    const std::vector<std::string> query = {
        ctx.flags.cli, "query", ctx.flags.array, "--range", std::to_string(r.p) + ":" + std::to_string(r.q),
        "--stat",      "sum",   "--stat",        "mean",    "--stat",
        "var",         "--json"};
    WarmEnds(ctx.flags.array, *ba, r);
    version.push_back(RunTimed({ctx.flags.cli, "--version"}, &out));
    warm.push_back(RunTimed(query, &out));
    warm_inside.push_back(inside(out));
    warm_engine.push_back(TimeQuery(*ba, r));
    {  // what a fresh process's library pays: a reader's Open, then its first query (warm)
      const double start = Seconds();
      auto fresh = OpenReader(ctx, true);
      opens.push_back(Seconds() - start);
      firsts.push_back(TimeQuery(*fresh, r));
    }
    DropCaches(ctx.flags.array, ctx.sidecar);
    version.push_back(RunTimed({ctx.flags.cli, "--version"}, &out));
    cold.push_back(RunTimed(query, &out));
    cold_inside.push_back(inside(out));
    DropCaches(ctx.flags.array, ctx.sidecar);
    cold_engine.push_back(TimeQuery(*ba, r));  // the RAM tier stays mapped in this process
  }
  const double v = Median(version);
  Row("CLI whole process, warm (end leaves cached) vs `momenta --version`", Ms(Median(warm)), Ms(v), Median(warm) / v);
  Row("CLI whole process, fully cold (array and sidecar dropped) vs `--version`", Ms(Median(cold)), Ms(v),
      Median(cold) / v);
  std::printf("|   difference to --version | warm %s, cold %s | targets 0.50 ms, 1.50 ms | |\n",
              Ms(Median(warm) - v).c_str(), Ms(Median(cold) - v).c_str());
  Row("CLI inside the command (--json elapsed_us), warm vs in-process warm", Us(Median(warm_inside)),
      Us(Median(warm_engine)), Median(warm_inside) / Median(warm_engine));
  Row("CLI inside the command, cold vs in-process cold", Us(Median(cold_inside)), Us(Median(cold_engine)),
      Median(cold_inside) / Median(cold_engine));
  Row("in-process, warm: a fresh reader's Open | its first query vs a later query", Us(Median(opens)),
      Us(Median(firsts)) + " vs " + Us(Median(warm_engine)), Median(firsts) / Median(warm_engine));
}

void RunBatches(Context& ctx) {
  auto ba = OpenReader(ctx, true);
  const std::vector<Range> drawn = KindZero(ctx, ctx.flags.batch);
  std::vector<IndexRange> ranges;
  for (const Range& r : drawn) ranges.push_back({r.p, r.q});
  std::vector<RangeSummary> out;
  std::vector<QueryCost> costs;
  DropCaches(ctx.flags.array, ctx.sidecar);
  double start = Seconds();
  Must(ba->SummarizeBatch(ranges, false, &out, &costs), "cold batch");
  const double cold = Seconds() - start;
  double requests = 0;
  for (const QueryCost& c : costs) requests += static_cast<double>(c.requests);
  const double per_query = requests / static_cast<double>(ranges.size());
  const double qps = static_cast<double>(ranges.size()) / cold;
  if (ctx.flags.fio_iops > 0) {
    const double bound = ctx.flags.fio_iops / per_query;
    Row("batch of " + std::to_string(ranges.size()) + " ranges, cold, data at both ends (" +
            std::to_string(per_query).substr(0, 4) + " reads per query) vs fio 16 KiB randread qd 32 / reads per query",
        PerSecond(qps), PerSecond(bound), qps / bound);
  } else {
    Row("batch of " + std::to_string(ranges.size()) + " ranges, cold (no --fio-iops: no bound)", PerSecond(qps), "", 0);
  }
  CheckAgainstSingles(ctx, *ba, ranges, out, 50, false, "cold batch");
  for (const Range& r : drawn) WarmEnds(ctx.flags.array, *ba, r);
  std::vector<double> warm;
  for (int k = 0; k < 5; ++k) {
    start = Seconds();
    Must(ba->SummarizeBatch(ranges, false, &out, &costs), "warm batch");
    warm.push_back(static_cast<double>(ranges.size()) / (Seconds() - start));
  }
  Row("batch, warm (end leaves cached), one core; target 10^5/s", PerSecond(Median(warm)), "", 0);
}

void RunBins(Context& ctx) {
  auto ba = OpenReader(ctx, true);
  const uint64_t k = ctx.flags.bins, n = ctx.length, leaf = TreeOf(*ba).layout().leaf_span();
  std::vector<IndexRange> exact, snapped;
  auto edge = [&](uint64_t i) { return static_cast<uint64_t>(static_cast<UInt128>(n) * i / k); };
  auto snap = [&](uint64_t e) {
    const uint64_t below = e / leaf * leaf, above = std::min(below + leaf, n);
    return above - e < e - below ? above : below;
  };
  for (uint64_t i = 0; i < k; ++i) {
    exact.push_back({edge(i), edge(i + 1)});
    snapped.push_back({snap(edge(i)), snap(edge(i + 1))});
  }
  std::vector<RangeSummary> out;
  std::vector<QueryCost> costs;
  // What a batch reads, summed over its bins (requests counted before merging).
  auto reads = [&](const char* what) {
    QueryCost sum;
    for (const QueryCost& c : costs) {
      sum.requests += c.requests;
      sum.array_bytes += c.array_bytes;
      sum.tier_bytes += c.tier_bytes;
      sum.ram_nodes += c.ram_nodes;
    }
    std::printf(
        "|   %s: %llu read requests before merging (%.1f MiB of the array, %.1f MiB of the disk tier), "
        "%llu RAM-tier nodes; at fio's %.0f IOPS the requests alone take %.1f ms | | | |\n",
        what, static_cast<unsigned long long>(sum.requests), sum.array_bytes / 1048576.0, sum.tier_bytes / 1048576.0,
        static_cast<unsigned long long>(sum.ram_nodes), ctx.flags.fio_iops,
        ctx.flags.fio_iops > 0 ? 1e3 * static_cast<double>(sum.requests) / ctx.flags.fio_iops : 0.0);
  };
  std::vector<double> exact_s, snapped_s;
  for (int round = 0; round < 3; ++round) {  // interleaved: exact, snapped
    DropCaches(ctx.flags.array, ctx.sidecar);
    double start = Seconds();
    Must(ba->SummarizeBatch(exact, true, &out, round == 0 ? &costs : nullptr), "exact bins");
    exact_s.push_back(Seconds() - start);
    if (round == 0) {
      reads("exact bins");
      CheckAgainstSingles(ctx, *ba, exact, out, 50, true, "exact bin");
    }
    DropCaches(ctx.flags.array, ctx.sidecar);
    start = Seconds();
    Must(ba->SummarizeBatch(snapped, true, &out, round == 0 ? &costs : nullptr), "snapped bins");
    snapped_s.push_back(Seconds() - start);
    if (round == 0) reads("snapped bins");
  }
  Row(std::to_string(k) + " exact bins of the whole array, cold, mean+min+max; target 100 ms", Ms(Median(exact_s)), "",
      0);
  Row(std::to_string(k) + " snapped bins, cold; target 20 ms", Ms(Median(snapped_s)), Ms(Median(exact_s)),
      Median(snapped_s) / Median(exact_s));
  // Warm: the same batches again, the pages the cold rounds read still cached.
  exact_s.clear();
  snapped_s.clear();
  for (int round = 0; round < 7; ++round) {  // interleaved: exact, snapped
    double start = Seconds();
    Must(ba->SummarizeBatch(exact, true, &out), "exact bins");
    exact_s.push_back(Seconds() - start);
    start = Seconds();
    Must(ba->SummarizeBatch(snapped, true, &out), "snapped bins");
    snapped_s.push_back(Seconds() - start);
  }
  Row(std::to_string(k) + " exact bins, warm; target 25 ms", Ms(Median(exact_s)), "", 0);
  Row(std::to_string(k) + " snapped bins, warm; target 5 ms", Ms(Median(snapped_s)), Ms(Median(exact_s)),
      Median(snapped_s) / Median(exact_s));
}

void RunThreads(Context& ctx) {
  auto ba = OpenReader(ctx, true);
  const std::vector<Range> ranges = KindZero(ctx, 64);
  for (const Range& r : ranges) WarmEnds(ctx.flags.array, *ba, r);
  auto rate = [&](int threads) {
    std::atomic<uint64_t> done{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    const double start = Seconds();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (size_t k = t; !stop.load(std::memory_order_relaxed); k += 7) {
          const Range& r = ranges[k % ranges.size()];
          Must(ba->Summarize(r.p, r.q, false).status(), "threads query");
          done.fetch_add(1, std::memory_order_relaxed);
        }
      });
    while (Seconds() - start < ctx.flags.seconds) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop = true;
    for (auto& th : pool) th.join();
    return static_cast<double>(done.load()) / (Seconds() - start);
  };
  std::vector<double> one, two;
  for (int round = 0; round < 3; ++round) {
    one.push_back(rate(1));
    two.push_back(rate(2));
  }
  Row("warm queries/s, 2 threads vs 1 thread on one handle", PerSecond(Median(two)), PerSecond(Median(one)),
      Median(two) / Median(one));
}

}  // namespace momenta::serving
