#include "bench/moments/queries.h"

#include <cstdio>

#include "bench/moments/answers.h"
#include "bench/moments/checks.h"
#include "bench/moments/format.h"
#include "bench/moments/query_stats.h"
#include "bench/moments/reference.h"

namespace momenta::moments_driver {

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
  WarmData(ctx.paths.array, ctx.report.setup.starts, ctx.config.region_elems());
  const Report& rep = ctx.report;
  for (int k = 0; k < ctx.config.checks && k < static_cast<int>(rep.on.samples.size()); ++k) {
    const Range& r = ctx.ranges.ranges[k];
    const Exact e = ExtentScan(ctx.paths.array, r.p, r.q);
    CheckAnswer(ctx, "cold, disk tier on", r, rep.on.samples[k].answer, false, e);
    CheckAnswer(ctx, "cold min/max, tier on", r, rep.on_ext.samples[k].answer, true, e);
  }
}

}  // namespace momenta::moments_driver
