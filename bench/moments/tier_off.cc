#include "bench/moments/tier_off.h"

#include <cstdio>
#include <vector>

#include "bench/moments/answers.h"
#include "bench/moments/checks.h"
#include "bench/moments/format.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"

namespace momenta::moments_driver {
namespace {

// What a query's raw-piece scratch costs with bins this large
// (buffers/tree/range_query.cc allocates two leaves per query). Milliseconds.
double ScratchMs(uint64_t leaf_span) {
  const auto t0 = Clock::now();
  std::vector<double> scratch(2 * leaf_span);
  volatile double sink = scratch[scratch.size() / 2];
  (void)sink;
  return Since(t0) * 1e3;
}

}  // namespace

void RunTierOff(DriverContext& ctx) {
  PhaseTimer phase(ctx, "off");
  Report& rep = ctx.report;
  {
    auto ba = OpenArray(ctx.paths, false);
    TreeOptions off;
    off.disk_tier = false;
    rep.build_off = TimedRebuild(ctx.paths, *ba, off);
    std::printf("build: Rebuild (disk tier off) %.2f s wall, %s read, %.0f MB/s of data\n", rep.build_off.wall,
                Bytes(static_cast<double>(rep.build_off.bytes)).c_str(),
                static_cast<double>(rep.data_on_disk) / rep.build_off.wall / 1e6);
  }
  auto ba = OpenArray(ctx.paths, false);
  rep.tiers_off = TierText(*ba);
  rep.leaf_off = TreeOf(*ba).layout().leaf_span();
  rep.off_scratch_ms = ScratchMs(rep.leaf_off);
  std::printf("tiers: %s\n", rep.tiers_off.c_str());
  TouchRamTier(*ba);
  rep.off = RunQueries(ctx, *ba, ctx.config.off_queries, false, "disk tier off, sum+mean+var");
  rep.off_ext = RunQueries(ctx, *ba, ctx.config.off_queries, true, "disk tier off, min+max");
  if (!rep.on.samples.empty()) {
    CompareRuns(ctx, rep.on, rep.off, false);
    CompareRuns(ctx, rep.on_ext, rep.off_ext, true);
  }
  // Back to the default tree (timed: another sample of the build).
  rep.builds_on.push_back(TimedRebuild(ctx.paths, *ba, TreeOptions{}));
  std::printf("build: Rebuild (disk tier on) %.2f s wall, %.0f MB/s\n", rep.builds_on.back().wall,
              static_cast<double>(rep.builds_on.back().bytes) / rep.builds_on.back().wall / 1e6);
}

}  // namespace momenta::moments_driver
