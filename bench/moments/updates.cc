#include "bench/moments/updates.h"

#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/moments/answers.h"
#include "bench/moments/checks.h"
#include "bench/moments/format.h"
#include "bench/moments/query_stats.h"
#include "bench/moments/reference.h"
#include "bench/moments/update_workloads.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"

namespace momenta::moments_driver {
namespace {

// Everything durable and clean before each timed part: a part starts with
// no write-back of an earlier one pending.
void Settle(BufferedArray& a) {
  Must(a.array().Sync(), "sync the array");
  Must(TreeOf(a).Flush(), "flush the tree");
}

// The data read once, and the tree's pages for the regions warmed (untimed).
void WarmUp(DriverContext& ctx, BufferedArray& ba, std::mt19937_64& rng) {
  PhaseTimer phase(ctx, "warm-up");
  WarmData(ctx.paths.array, ctx.report.setup.starts, ctx.config.region_elems());
  const auto warm = MakeUpdates(ctx, rng, ctx.config.updates / 4);
  Must(ba.Apply(warm), "warm-up updates");
  ctx.report.updates_total += warm.size();
  Settle(ba);
}

// One update's parts (ReadRaw, WriteRaw of one element) are timed in
// bench/moments_bench.cc; here, the stat() a one-update Apply adds. Seconds.
double StatSeconds(const std::string& path) {
  struct stat st;
  const auto t0 = Clock::now();
  for (int k = 0; k < 100000; ++k) ::stat(path.c_str(), &st);
  return Since(t0) / 100000;
}

// Scattered over all the data: nearly every update dirties a clean page.
// Each round: the kernel's floor two ways on the same elements, then momenta
// in batches and one per Apply. Medians of rounds: this VM's CPUs are
// shared, and one round can be slowed several times over.
void ScatteredRounds(DriverContext& ctx, BufferedArray& ba, std::mt19937_64& rng) {
  const Config& g = ctx.config;
  Report& rep = ctx.report;
  std::vector<double> floor_stores, floor_pwrites, scattered, scattered_single;
  for (int round = 0; round < g.update_rounds; ++round) {
    const auto burst = MakeUpdates(ctx, rng, g.updates);
    floor_stores.push_back(BareStores(ctx, ba, burst));
    Settle(ba);
    floor_pwrites.push_back(BarePwrites(ctx, ba, burst));
    Settle(ba);
    scattered.push_back(ApplyBatches(ba, burst, g.batch));
    rep.dirty_after_burst_mib = static_cast<double>(MeminfoKiB("Dirty")) / 1024;
    rep.updates_total += burst.size();
    Settle(ba);
    const auto single = MakeUpdates(ctx, rng, g.single_updates);
    scattered_single.push_back(ApplyBatches(ba, single, 1));
    rep.updates_total += single.size();
    Settle(ba);
    std::printf(
        "updates: round %d scattered: floor %.2f M/s by bare stores, %.2f M/s by bare pwrites; momenta "
        "%.2f M/s in batches of %" PRIu64 " (%.0f MiB dirty after them), %.2f M/s one per Apply\n",
        round + 1, floor_stores.back() / 1e6, floor_pwrites.back() / 1e6, scattered.back() / 1e6, g.batch,
        rep.dirty_after_burst_mib, scattered_single.back() / 1e6);
  }
  rep.upd_floor = Median(floor_stores);
  rep.upd_floor_pwrite = Median(floor_pwrites);
  rep.upd_burst = Median(scattered);
  rep.upd_single = Median(scattered_single);
}

// A hot set: a resident working set whose pages are already dirty, as for
// a writer that keeps updating the same regions.
void HotSetRounds(DriverContext& ctx, BufferedArray& ba, std::mt19937_64& rng) {
  const Config& g = ctx.config;
  Report& rep = ctx.report;
  const auto windows = HotWindows(ctx, rng);
  const auto touch = TouchHotPages(ctx, windows);
  ApplyBatches(ba, touch, g.batch);
  rep.hot_pages = touch.size();
  rep.updates_total += touch.size();
  std::vector<double> hot_rates, hot_single_rates, hot_cpu_rates;
  for (int round = 0; round < g.update_rounds; ++round) {
    const auto hot = MakeHotUpdates(ctx, windows, rng, g.updates);
    double per_cpu = 0;
    hot_rates.push_back(ApplyBatches(ba, hot, g.batch, &per_cpu));
    hot_cpu_rates.push_back(per_cpu);
    const auto hot_single = MakeHotUpdates(ctx, windows, rng, g.single_updates);
    hot_single_rates.push_back(ApplyBatches(ba, hot_single, 1));
    rep.updates_total += hot.size() + hot_single.size();
    std::printf("updates: round %d hot set of %s: %.2f M/s in batches of %" PRIu64
                " (%.2f M per CPU second), "
                "%.2f M/s one per Apply\n",
                round + 1, Bytes(static_cast<double>(rep.hot_pages) * 4096).c_str(), hot_rates.back() / 1e6, g.batch,
                hot_cpu_rates.back() / 1e6, hot_single_rates.back() / 1e6);
  }
  rep.upd_hot = Median(hot_rates);
  rep.upd_hot_cpu = Median(hot_cpu_rates);
  rep.upd_hot_single = Median(hot_single_rates);
}

// Scattered updates in batches ended by fdatasync: the write-back included.
void Sustained(DriverContext& ctx, BufferedArray& ba, std::mt19937_64& rng) {
  PhaseTimer phase(ctx, "sustained");
  Report& rep = ctx.report;
  const auto many = MakeUpdates(ctx, rng, ctx.config.sustained_updates);
  const auto t0 = Clock::now();
  ApplyBatches(ba, many, ctx.config.batch);
  rep.sustained_apply_s = Since(t0);
  const auto t1 = Clock::now();
  Settle(ba);
  rep.sustained_sync_s = Since(t1);
  rep.upd_sustained = static_cast<double>(many.size()) / Since(t0);
  rep.updates_total += many.size();
  std::printf("updates: %.2f M/s sustained (%zu updates: %.1f s applying, %.1f s fdatasync)\n", rep.upd_sustained / 1e6,
              many.size(), rep.sustained_apply_s, rep.sustained_sync_s);
}

// Burst updates with the array opened afresh with --io pread and --io mmap.
void OtherBackends(DriverContext& ctx, std::mt19937_64& rng) {
  PhaseTimer phase(ctx, "backends");
  Report& rep = ctx.report;
  for (IoKind kind : {IoKind::kPread, IoKind::kMmap}) {
    auto other = OpenArray(ctx.paths, true, kind);
    const auto u = MakeUpdates(ctx, rng, ctx.config.backend_updates);
    const double rate = ApplyBatches(*other, u, ctx.config.batch);
    rep.updates_total += u.size();
    rep.upd_backend[std::string(IoKindName(kind))] = rate;
    std::printf("updates: %.2f M/s in batches of %" PRIu64 " with --io %s\n", rate / 1e6, ctx.config.batch,
                std::string(IoKindName(kind)).c_str());
    Settle(*other);
  }
}

}  // namespace

void RunUpdates(DriverContext& ctx) {
  Report& rep = ctx.report;
  std::mt19937_64 rng(ctx.config.seed + 2);
  auto ba = OpenArray(ctx.paths, true);
  rep.dirty_threshold_mib = static_cast<double>(VmstatPages("nr_dirty_threshold")) * 4096 / kMiB;
  rep.dirty_background_mib = static_cast<double>(VmstatPages("nr_dirty_background_threshold")) * 4096 / kMiB;
  WarmUp(ctx, *ba, rng);
  {
    PhaseTimer phase(ctx, "updates");
    rep.t_stat = StatSeconds(ctx.paths.array);
    ScatteredRounds(ctx, *ba, rng);
    HotSetRounds(ctx, *ba, rng);
    Settle(*ba);
  }
  Sustained(ctx, *ba, rng);
  ba.reset();
  OtherBackends(ctx, rng);
  rep.have_updates = true;
}

void RunVerifyAfterUpdates(DriverContext& ctx) {
  PhaseTimer phase(ctx, "verify");
  Report& rep = ctx.report;
  const QuerySet& qs = ctx.ranges;
  auto check = OpenArray(ctx.paths, false);
  for (int k = 0; k < ctx.config.checks && k < static_cast<int>(qs.scan_ranges.size() + qs.ranges.size()); ++k) {
    const int scans = static_cast<int>(qs.scan_ranges.size());
    const Range& r = k < scans ? qs.scan_ranges[k] : qs.ranges[k - scans];
    const Sample m = ColdQuery(ctx.paths, *check, r, false), x = ColdQuery(ctx.paths, *check, r, true);
    const Exact e = ExtentScan(ctx.paths.array, r.p, r.q);
    CheckAnswer(ctx, "after updates", r, m.answer, false, e);
    CheckAnswer(ctx, "after updates, min/max", r, x.answer, true, e);
  }
  const auto t0 = Clock::now();
  rep.verify = Must(check->Verify(), "verify");
  rep.verify_seconds = Since(t0);
  rep.have_verify = true;
  std::printf("verify: %" PRIu64 " nodes checked, %" PRIu64 " mismatches (%.1f s)\n", rep.verify.nodes_checked,
              rep.verify.mismatches, rep.verify_seconds);
  for (const std::string& e : rep.verify.examples) std::printf("verify:   %s\n", e.c_str());
}

}  // namespace momenta::moments_driver
