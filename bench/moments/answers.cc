#include "bench/moments/answers.h"

#include <cstdio>

#include "bench/moments/format.h"
#include "bench/moments/query_stats.h"
#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"

namespace momenta::moments_driver {
namespace {

long double StatValue(Stat s, const RangeSummary& r, uint64_t p) {
  StatParams params;
  auto a = ComputeStat(s, params, r, p, DType::kF8);
  if (!a.ok()) Die("ComputeStat: " + a.status().ToString());
  return a->values[0];
}

}  // namespace

std::unique_ptr<BufferedArray> OpenArray(const DriverPaths& paths, bool writable, IoKind kind,
                                         std::vector<std::string>* notices) {
  BufferedArrayOptions o;
  o.io.kind = kind;
  o.io.writable = writable;
  return Must(BufferedArray::Open(paths.array, o, notices), "open the buffered array");
}

void TouchRamTier(BufferedArray& ba) {
  MomentTree& t = TreeOf(ba);
  const TreeLayout& l = t.layout();
  volatile double sink = 0;
  for (int level = l.ram_from(); level <= l.levels(); ++level)
    for (uint64_t j = 0; j < l.nodes(level); ++j) sink = sink + t.Node(level, j)[0];
  (void)sink;
}

std::string TierText(BufferedArray& ba) {
  MomentTree& t = TreeOf(ba);
  const TreeLayout& l = t.layout();
  std::string s = "leaf " + std::to_string(l.leaf_span()) + " elements (" +
                  Bytes(static_cast<double>(l.leaf_span() * 8)) + "), " + std::to_string(l.levels()) +
                  " levels, fanout " + std::to_string(l.fanout()) + ", RAM tier levels " +
                  std::to_string(l.ram_from()) + ".." + std::to_string(l.levels()) + " = " +
                  Bytes(static_cast<double>(t.ram_tier_bytes()));
  if (l.ram_from() > 1)
    s += ", disk tier levels 1.." + std::to_string(l.ram_from() - 1) + " = " +
         Bytes(static_cast<double>(t.disk_tier_bytes())) + " (sparse)";
  return s;
}

Sample ColdQuery(const DriverPaths& paths, BufferedArray& ba, const Range& r, bool extremes) {
  paths.DropCaches();
  Sample s;
  s.kind = r.kind;
  const auto t0 = Clock::now();
  auto summary = ba.Summarize(r.p, r.q, extremes, &s.cost);
  if (!summary.ok()) Die("Summarize: " + summary.status().ToString());
  if (extremes) {
    s.answer.min = static_cast<double>(StatValue(Stat::kMin, *summary, r.p));
    s.answer.max = static_cast<double>(StatValue(Stat::kMax, *summary, r.p));
  } else {
    s.answer.sum = StatValue(Stat::kSum, *summary, r.p);
    s.answer.mean = StatValue(Stat::kMean, *summary, r.p);
    s.answer.var = StatValue(Stat::kVar, *summary, r.p);
  }
  s.seconds = Since(t0);
  return s;
}

QueryRun RunQueries(const DriverContext& ctx, BufferedArray& ba, int count, bool extremes, const std::string& label) {
  const std::vector<Range>& ranges = ctx.ranges.ranges;
  QueryRun run{label, {}};
  const auto t0 = Clock::now();
  for (int k = 0; k < count && k < static_cast<int>(ranges.size()); ++k)
    run.samples.push_back(ColdQuery(ctx.paths, ba, ranges[k], extremes));
  const QueryRow all = Summarize(run, -1);
  std::printf(
      "queries %-34s n=%zu p50 %s p99 %s mean %s; array %s, tier %s, %.1f requests per query"
      " (%.0f s with the drops)\n",
      label.c_str(), all.n, Ms(all.p50).c_str(), Ms(all.p99).c_str(), Ms(all.mean).c_str(),
      Bytes(all.array_bytes).c_str(), Bytes(all.tier_bytes).c_str(), all.requests, Since(t0));
  std::fflush(stdout);
  return run;
}

BuildRun TimedRebuild(const DriverPaths& paths, BufferedArray& ba, const TreeOptions& options) {
  paths.DropCaches();
  const auto t0 = Clock::now();
  auto st = Must(ba.Rebuild(options), "rebuild");
  BuildRun r{Since(t0), st.seconds, st.data_bytes_read};
  return r;
}

}  // namespace momenta::moments_driver
