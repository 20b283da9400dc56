// The terabyte-scale benchmark of the moment buffer.
//
// Setup: a sparse 2^37-element f8 array (1 TiB) with `regions` random-walk
// regions of `region-mib` MiB each at random, seeded, non-overlapping offsets
// (1 MiB aligned), written with large sequential writes so every block is
// allocated. Then, on this machine:
//
//   build    BufferedArray::Rebuild with the default options (disk tier on,
//            1 MiB RAM budget), page cache dropped first; disk tier off too.
//            A timer breakdown of the build's pattern (reads alone, the
//            summarizing alone) shows where its time goes.
//   queries  random ranges of at least 2^27 elements (1 GiB): half with both
//            ends inside written regions, half anywhere. Before EACH query the
//            array's and the tree file's page cache is dropped (the RAM tier
//            stays: it is mapped and was touched once). sum+mean+var (partial
//            leaves read on their shorter side), then min+max on the same
//            ranges; disk tier on and off.
//   scans    a few ranges of 1..8 GiB with both ends in data: momenta (cold)
//            against a plain C++ pread loop (8 MiB chunks, cold) and NumPy
//            memmap (bench/scan_numpy.py, cold); the C++ scan is also the
//            exact reference the answers are checked against.
//   updates  warm single-element BufferedArray::Apply (the data read once,
//            sequentially, as any reader would): scattered over all the data
//            (each update dirties a clean cached page), beside the kernel's
//            floor for dirtying the same pages with bare stores; to a hot set
//            (a window in each region, its pages resident and dirty); in
//            batches and one Apply per update; a sustained scattered run
//            ended by fdatasync (past the write-back threshold updates go at
//            the disk's pace), and the other I/O backends; then Verify() must
//            find 0 mismatches.
//
// Each phase also reports how much CPU and disk other processes used
// meanwhile (/proc/stat, /proc/diskstats): on a shared machine that tells
// which figures were disturbed.
//
// Answers are checked: a few cold queries against an exact scan of their data
// (holes are zeros), every disk-tier-on answer against the disk-tier-off one,
// and a few queries again after the updates. Any wrong answer makes the exit
// status 3 (the table is printed all the same).
//
// Environment:
//   MOMENTA_BENCH_DIR   folder for the files (default: the current one)
//   MOMENTA_BENCH_KEEP  1: keep the array and its buffer afterwards, and reuse
//                       a kept setup made with the same parameters
//   MOMENTA_BENCH_SEED  the seed of everything random (default 20240601)
// Flags (--name=value): see --help (config.cc); bench/run_moments.sh passes
// fio's figures and the NumPy script. Prints progress and a markdown table
// on stdout.
//
// One phase a file in this folder, each reading and filling one
// DriverContext (context.h); this file only runs them in order.
#include <cstdio>

#include "bench/moments/build.h"
#include "bench/moments/cleanup.h"
#include "bench/moments/config.h"
#include "bench/moments/context.h"
#include "bench/moments/queries.h"
#include "bench/moments/report.h"
#include "bench/moments/scans.h"
#include "bench/moments/setup.h"
#include "bench/moments/tier_off.h"
#include "bench/moments/updates.h"

namespace momenta::moments_driver {
namespace {

// Removes the files unless keeping; the exit status: 3 when any answer was wrong.
int Finish(const DriverContext& ctx) {
  if (!ctx.config.keep) {
    RemoveDriverFiles(ctx.paths);
    std::printf("\nremoved the array and its buffer (MOMENTA_BENCH_KEEP=1 keeps them)\n");
  } else {
    std::printf("\nkept %s and its buffer (remove them when done)\n", kArrayName);
  }
  if (!ctx.correct || ctx.report.verify.mismatches != 0) {
    std::printf("\nSOME ANSWERS WERE WRONG: these figures measure nothing until that is fixed.\n");
    return 3;
  }
  return 0;
}

int Run(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  DriverContext ctx(ParseConfig(argc, argv));
  InstallSignalCleanup(ctx.paths);
  PrintRunHeader(ctx);
  RunSetup(ctx);
  RunBuild(ctx);
  const Config& g = ctx.config;
  if (g.Wants("queries")) RunColdQueries(ctx);
  if (g.Wants("scans")) RunScans(ctx);
  if (g.Wants("queries") && g.checks > 0) RunExactChecks(ctx);
  if (g.Wants("off")) RunTierOff(ctx);
  if (g.Wants("updates")) {
    RunUpdates(ctx);
    RunVerifyAfterUpdates(ctx);
  }
  std::printf("load average at the end: %s\n", LoadAverage().c_str());
  PrintReport(ctx);
  return Finish(ctx);
}

}  // namespace
}  // namespace momenta::moments_driver

int main(int argc, char** argv) { return momenta::moments_driver::Run(argc, argv); }
