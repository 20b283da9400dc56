#include "bench/moments/report.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "bench/moments/format.h"
#include "bench/moments/query_stats.h"

namespace momenta::moments_driver {
namespace {

std::string Verdict(bool ok) { return ok ? "met" : "**missed**"; }

double FioBytesPerSecond(const Config& g) { return g.fio_seq_mbs * 1e6; }

// Build speed: the data on disk over the whole Rebuild call.
double BuildSpeed(const Report& r, const BuildRun& b) { return static_cast<double>(r.data_on_disk) / b.wall; }

// The fastest of the timed rebuilds with the disk tier on. REQUIRES: !r.builds_on.empty()
BuildRun BestBuild(const Report& r) {
  BuildRun best = r.builds_on.front();
  for (const BuildRun& b : r.builds_on)
    if (b.wall < best.wall) best = b;
  return best;
}

void PrintBuildRows(const DriverContext& ctx) {
  const Report& r = ctx.report;
  const double fio = FioBytesPerSecond(ctx.config);
  if (!r.builds_on.empty()) {
    const BuildRun best = BestBuild(r);
    std::string runs;
    for (const BuildRun& b : r.builds_on) runs += (runs.empty() ? "" : ", ") + Fmt("%.2f", b.wall);
    if (r.first_open > 0) runs += Fmt("; first Open %.2f", r.first_open);
    const double speed = BuildSpeed(r, best);
    const std::string ref = fio > 0 ? Fmt("fio seq read %.0f MB/s", fio / 1e6) : "fio n/a";
    const std::string verdict =
        fio > 0 ? Fmt("%.0f%% of fio: ", 100 * speed / fio) + Verdict(speed >= 0.8 * fio) : "fio n/a";
    std::printf("| build, disk tier on, best of %zu (%s s) | %.0f MB/s | %s | >= 80%% of fio | %s |\n",
                r.builds_on.size(), runs.c_str(), speed / 1e6, ref.c_str(), verdict.c_str());
  }
  if (r.build_off.wall > 0)
    std::printf(
        "| build, disk tier off (%.2f s; reads %s: whole 2^%d-element leaves, holes too) | %.0f MB/s | | | %s |\n",
        r.build_off.wall, Bytes(static_cast<double>(r.build_off.bytes)).c_str(),
        static_cast<int>(std::log2(static_cast<double>(r.leaf_off))), BuildSpeed(r, r.build_off) / 1e6,
        fio > 0 ? Fmt("%.0f%% of fio", 100 * BuildSpeed(r, r.build_off) / fio).c_str() : "");
}

void PrintQueryRows(const DriverContext& ctx) {
  const Config& g = ctx.config;
  const QueryRow on = Summarize(ctx.report.on, -1), off = Summarize(ctx.report.off, -1);
  if (on.n > 0) {
    const std::string floor = g.fio_rand_p50_us > 0 ? Fmt("fio randread p50: 4 KiB %.0f us", g.fio_rand_p50_us) +
                                                          Fmt(", 64 KiB %.0f us", g.fio_rand64k_p50_us)
                                                    : "fio n/a";
    std::printf("| cold query p50, disk tier on (sum+mean+var) | %s | %s | <= 2 ms | %s |\n", Ms(on.p50).c_str(),
                floor.c_str(), Verdict(on.p50 <= 2e-3).c_str());
    std::printf("| cold query p99, disk tier on | %s | | | |\n", Ms(on.p99).c_str());
  }
  if (off.n > 0)
    std::printf("| cold query p50 / p99, disk tier off (paper) | %s / %s | | | %s |\n", Ms(off.p50).c_str(),
                Ms(off.p99).c_str(), on.n > 0 ? Fmt("%.0fx the disk tier's p50", off.p50 / on.p50).c_str() : "");
}

void PrintScanRows(const Report& r) {
  if (r.scan_cpp.empty()) return;
  double m = 0, c = 0, n = 0;
  for (size_t k = 0; k < r.scan_cpp.size(); ++k) {
    m += r.scan_momenta[k].seconds;
    c += r.scan_cpp[k];
    if (!r.scan_numpy.empty()) n += r.scan_numpy[k].seconds;
  }
  const double k = static_cast<double>(r.scan_cpp.size());
  std::printf(
      "| scan of the same ranges, C++ pread loop (mean of %zu) | %.2f s | momenta %s on them | | %.0fx momenta's time "
      "|\n",
      r.scan_cpp.size(), c / k, Ms(m / k).c_str(), c / m);
  if (!r.scan_numpy.empty())
    std::printf("| scan of the same ranges, NumPy memmap (mean of %zu) | %.2f s | | | %.0fx momenta's time |\n",
                r.scan_numpy.size(), n / k, n / m);
}

void PrintUpdateRows(const DriverContext& ctx) {
  const Config& g = ctx.config;
  const Report& r = ctx.report;
  if (!r.have_updates) return;
  std::printf("| warm updates to a hot set (%s resident and dirty, in %d windows), Apply batches of %" PRIu64
              ", median of %d rounds | %.2f M/s | %.2f M per second of CPU | >= 1 M/s | %s |\n",
              Bytes(static_cast<double>(r.hot_pages) * 4096).c_str(), g.regions, g.batch, g.update_rounds,
              r.upd_hot / 1e6, r.upd_hot_cpu / 1e6, Verdict(r.upd_hot >= 1e6).c_str());
  std::printf("| warm updates to the hot set, one Apply per update | %.2f M/s | | | |\n", r.upd_hot_single / 1e6);
  std::printf("| warm updates scattered over all %s of data (each dirties a clean cached page), batches of %" PRIu64
              ", median | %.2f M/s | kernel floor: bare stores %.2f M/s, bare pwrites %.2f M/s (same pages) | | %.0f%% "
              "of the faster floor |\n",
              Bytes(static_cast<double>(g.data_bytes())).c_str(), g.batch, r.upd_burst / 1e6, r.upd_floor / 1e6,
              r.upd_floor_pwrite / 1e6, 100 * r.upd_burst / std::max(r.upd_floor, r.upd_floor_pwrite));
  std::printf("| warm scattered updates, one Apply per update | %.2f M/s | | | |\n", r.upd_single / 1e6);
  std::printf(
      "| sustained updates: %s in batches, then fdatasync (every touched page written back) | %.2f M/s | %.1f s "
      "applying + %.1f s syncing | | |\n",
      Fmt("%.1f M", static_cast<double>(g.sustained_updates) / 1e6).c_str(), r.upd_sustained / 1e6, r.sustained_apply_s,
      r.sustained_sync_s);
}

// The table of measures against their references and targets.
void PrintMeasureTable(const DriverContext& ctx) {
  const Report& r = ctx.report;
  std::printf("\n| measure | momenta | reference | target | verdict |\n|---|---:|---:|---|---|\n");
  PrintBuildRows(ctx);
  PrintQueryRows(ctx);
  PrintScanRows(r);
  PrintUpdateRows(ctx);
  if (r.have_verify)
    std::printf("| Verify after %" PRIu64 " updates | %" PRIu64 " mismatches in %" PRIu64
                " nodes (%.1f s) | | 0 | %s |\n",
                r.updates_total, r.verify.mismatches, r.verify.nodes_checked, r.verify_seconds,
                Verdict(r.verify.mismatches == 0).c_str());
  std::printf("| answers checked (exact scans, tiers on vs off, after updates) | %s | | all right | %s |\n",
              ctx.correct ? "all right" : "SOME WRONG", Verdict(ctx.correct).c_str());
}

// Every cold-query run by kind of range, then fio's floor.
void PrintColdQueryTable(const DriverContext& ctx) {
  const Config& g = ctx.config;
  const Report& r = ctx.report;
  if (r.on.samples.empty() && r.off.samples.empty()) return;
  std::printf("\nCold queries (array and tree pages dropped before each; the RAM tier is mapped):\n\n");
  std::printf(
      "| tier | stats | ranges | n | p50 | p99 | mean | max | array bytes/query | tier bytes/query | requests/query "
      "|\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const QueryRun* run : {&r.on, &r.on_ext, &r.off, &r.off_ext}) {
    if (run->samples.empty()) continue;
    for (int kind : {-1, 0, 1}) {
      const QueryRow q = Summarize(*run, kind);
      const bool on_tier = run == &r.on || run == &r.on_ext;
      const bool ext = run == &r.on_ext || run == &r.off_ext;
      std::printf("| %s | %s | %s | %zu | %s | %s | %s | %s | %s | %s | %.1f |\n",
                  on_tier ? "disk tier on" : "off (paper)", ext ? "min+max" : "sum+mean+var",
                  kind < 0    ? "all"
                  : kind == 0 ? "data at both ends"
                              : "anywhere",
                  q.n, Ms(q.p50).c_str(), Ms(q.p99).c_str(), Ms(q.mean).c_str(), Ms(q.max).c_str(),
                  Bytes(q.array_bytes).c_str(), Bytes(q.tier_bytes).c_str(), q.requests);
    }
  }
  const double fio = FioBytesPerSecond(g);
  std::printf(
      "\nFloor (fio on the same file system, O_DIRECT, io_uring): randread qd 1 p50 %s (4 KiB), %s (64 KiB); "
      "sequential read 1 MiB qd 32: %s.\n",
      g.fio_rand_p50_us > 0 ? Fmt("%.0f us", g.fio_rand_p50_us).c_str() : "n/a",
      g.fio_rand64k_p50_us > 0 ? Fmt("%.0f us", g.fio_rand64k_p50_us).c_str() : "n/a",
      fio > 0 ? Fmt("%.0f MB/s", fio / 1e6).c_str() : "n/a");
}

void PrintScanTable(const Report& r) {
  if (r.scan_cpp.empty()) return;
  std::printf("\nScans of %zu ranges with data at both ends (cold):\n\n", r.scan_cpp.size());
  std::printf("| range | length | momenta | C++ pread loop | NumPy memmap | C++ / momenta | NumPy / momenta |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t k = 0; k < r.scan_cpp.size(); ++k) {
    const Range& rg = r.scan_ranges[k];
    const double m = r.scan_momenta[k].seconds;
    const bool np = !r.scan_numpy.empty();
    std::printf("| [%" PRIu64 ", %" PRIu64 ") | %s | %s | %.2f s | %s | %.0fx | %s |\n", rg.p, rg.q,
                Bytes(static_cast<double>((rg.q - rg.p) * 8)).c_str(), Ms(m).c_str(), r.scan_cpp[k],
                np ? Fmt("%.2f s", r.scan_numpy[k].seconds).c_str() : "n/a", r.scan_cpp[k] / m,
                np ? Fmt("%.0fx", r.scan_numpy[k].seconds / m).c_str() : "n/a");
  }
}

void PrintWhereTimeGoes(const DriverContext& ctx) {
  const Report& r = ctx.report;
  std::printf("\nWhere the time goes:\n\n");
  if (r.have_breakdown && !r.builds_on.empty()) {
    const BuildRun best = BestBuild(r);
    const BuildBreakdown& b = r.breakdown;
    std::printf(
        "- build: %.2f GB/s of data (BuildStats %.2f s of %.2f s wall). Its read pattern alone (16 MiB batches "
        "of 1 MiB, as buffers/tree/tree_build.cc): %.2f GB/s; the same bytes 64 MiB per batch: %.2f GB/s, 256 MiB: "
        "%.2f GB/s. "
        "Summarizing warm leaves: %.2f GB/s on 1 thread, %.2f GB/s on 2.\n",
        BuildSpeed(r, best) / 1e9, best.seconds, best.wall, b.read_chunked_gbs, b.read_64_gbs, b.read_window_gbs,
        b.cpu1_gbs, b.cpu2_gbs);
  }
  if (r.leaf_off > 0)
    std::printf(
        "- disk tier off: a query reads up to half a %s bin on each side (shorter side); allocating "
        "and zeroing a scratch of 2 leaves (%s), as buffers/tree/range_query.cc does per query, takes %.0f ms alone.\n",
        Bytes(static_cast<double>(r.leaf_off * 8)).c_str(), Bytes(static_cast<double>(r.leaf_off * 16)).c_str(),
        r.off_scratch_ms);
  if (!r.have_updates) return;
  std::printf("- one update: %.2f us in batches of %" PRIu64
              ", %.2f us one per Apply (which adds a stat() of "
              "%.2f us, the batch bracket and the refresh bookkeeping); the array side alone (ReadRaw and WriteRaw of "
              "one element) is timed in bench/moments_bench.cc.\n",
              1e6 / r.upd_burst, ctx.config.batch, 1e6 / r.upd_single, r.t_stat * 1e6);
  std::printf(
      "- each random update dirties a 4 KiB page of the array: the burst left %.0f MiB dirty; the kernel "
      "starts writing back at %.0f MiB and throttles writers near %.0f MiB, after which updates run at "
      "the disk's write-back pace.\n",
      r.dirty_after_burst_mib, r.dirty_background_mib, r.dirty_threshold_mib);
  for (const auto& [name, rate] : r.upd_backend)
    std::printf("- burst updates with the array opened with --io %s: %.2f M/s\n", name.c_str(), rate / 1e6);
}

void PrintPhaseUse(const DriverContext& ctx) {
  bool any_busy = false;
  for (const PhaseUse& u : ctx.usage) any_busy |= u.busy();
  std::printf("\nOther processes during each phase%s:\n\n", any_busy ? " (a busy phase's figures are disturbed)" : "");
  for (const PhaseUse& u : ctx.usage)
    std::printf("- %s (%.0f s): %s%s\n", u.phase.c_str(), u.seconds, u.Text().c_str(), u.busy() ? " **busy**" : "");
}

}  // namespace

void PrintRunHeader(const DriverContext& ctx) {
  const Config& g = ctx.config;
  std::printf("moments_driver: seed %" PRIu64 ", array 2^%d f8, %d regions x %" PRIu64
              " MiB, queries >= 2^%d elements: %d cold (disk tier on), %d (off), %d scans, %d exact checks; "
              "updates: %" PRIu64 " burst in batches of %" PRIu64 ", %" PRIu64 " single, %" PRIu64
              " sustained, %" PRIu64 " per other backend; %d timed builds; parts %s; keep %d; load average %s\n",
              g.seed, g.length_log2, g.regions, g.region_mib, g.min_len_log2, g.queries, g.off_queries, g.scans,
              g.checks, g.updates, g.batch, g.single_updates, g.sustained_updates, g.backend_updates, g.builds,
              g.parts.c_str(), g.keep ? 1 : 0, LoadAverage().c_str());
  std::printf("fio (given): seq read %.0f MB/s, randread 4k p50 %.0f us, 64k p50 %.0f us\n", g.fio_seq_mbs,
              g.fio_rand_p50_us, g.fio_rand64k_p50_us);
}

void PrintReport(const DriverContext& ctx) {
  const Config& g = ctx.config;
  const Report& r = ctx.report;
  std::printf("\n## Results\n\n");
  std::printf("Array: 2^%d f8 elements (%s), %d regions x %" PRIu64 " MiB = %s of data; seed %" PRIu64 ".\n",
              g.length_log2, Bytes(static_cast<double>(g.length() * 8)).c_str(), g.regions, g.region_mib,
              Bytes(static_cast<double>(r.data_on_disk)).c_str(), g.seed);
  if (!r.tiers_on.empty()) std::printf("Disk tier on: %s.\n", r.tiers_on.c_str());
  if (!r.tiers_off.empty()) std::printf("Disk tier off: %s.\n", r.tiers_off.c_str());
  PrintMeasureTable(ctx);
  PrintColdQueryTable(ctx);
  PrintScanTable(r);
  PrintWhereTimeGoes(ctx);
  PrintPhaseUse(ctx);
}

}  // namespace momenta::moments_driver
