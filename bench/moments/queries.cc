#include "bench/moments/queries.h"

#include <cstdio>

#include "bench/moments/answers.h"
#include "bench/moments/checks.h"
#include "bench/moments/format.h"
#include "bench/moments/query_stats.h"
#include "bench/moments/reference.h"
#include "bench/moments/setup.h"

namespace momenta::moments_driver {

QueryRun RunQueries(const DriverContext& ctx, BufferedArray& ba, int count, bool extremes,
                    const std::string& label) {
  const std::vector<Range>& ranges = ctx.ranges.ranges;
  QueryRun run{label, {}};
  const auto t0 = Clock::now();
  for (int k = 0; k < count && k < static_cast<int>(ranges.size()); ++k)
    run.samples.push_back(ColdQuery(ctx.paths, ba, ranges[k], extremes));
  const QueryRow all = Summarise(run, -1);
  std::printf("queries %-34s n=%zu p50 %s p99 %s mean %s; array %s, tier %s, %.1f requests per query"
              " (%.0f s with the drops)\n",
              label.c_str(), all.n, Ms(all.p50).c_str(), Ms(all.p99).c_str(), Ms(all.mean).c_str(),
              Bytes(all.array_bytes).c_str(), Bytes(all.tier_bytes).c_str(), all.requests, Since(t0));
  std::fflush(stdout);
  return run;
}

void RunColdQueries(DriverContext& ctx) {
  PhaseTimer phase(ctx, "queries");
  auto ba = OpenArray(ctx.paths, false);  // a fresh mapping: the disk tier is not mapped
  TouchRamTier(*ba);
  ctx.report.on = RunQueries(ctx, *ba, ctx.config.queries, false, "disk tier on, sum+mean+var");
  ctx.report.on_ext = RunQueries(ctx, *ba, ctx.config.queries, true, "disk tier on, min+max");
}

void RunExactChecks(DriverContext& ctx) {
  PhaseTimer phase(ctx, "checks");
  std::printf("reading the data once (warm) for exact checks of a few cold queries...\n");
  WarmData(ctx);
  const Report& rep = ctx.report;
  for (int k = 0; k < ctx.config.checks && k < static_cast<int>(rep.on.samples.size()); ++k) {
    const Range& r = ctx.ranges.ranges[k];
    const Exact e = ExtentScan(ctx.paths.array, r.p, r.q);
    CheckAnswer(ctx, "cold, disk tier on", r, rep.on.samples[k].answer, false, e);
    CheckAnswer(ctx, "cold min/max, tier on", r, rep.on_ext.samples[k].answer, true, e);
  }
}

}  // namespace momenta::moments_driver
