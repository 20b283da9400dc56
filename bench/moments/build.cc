#include "bench/moments/build.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/moments/answers.h"
#include "bench/moments/files.h"
#include "bench/moments/format.h"
#include "bench/moments/split_mix.h"
#include "buffers/algebra/range_summary.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "storage/io/extents.h"
#include "storage/io/io_backend.h"

namespace momenta::moments_driver {
namespace {

// The data extents read in batches of batch_bytes, each one ReadBatch of
// 1 MiB requests, page cache dropped first. GB/s.
double ReadPass(const DriverContext& ctx, IoBackend& backend, const std::vector<ByteRange>& ext, uint64_t batch_bytes) {
  AlignedBuffer buf(batch_bytes);
  DropCache(ctx.paths.array);
  uint64_t total = 0;
  const auto t0 = Clock::now();
  std::vector<ReadRequest> reqs;
  for (const ByteRange& r : ext) {
    for (uint64_t at = r.begin; at < r.end; at += batch_bytes) {
      const uint64_t len = std::min(batch_bytes, r.end - at);
      reqs.clear();
      for (uint64_t o = 0; o < len; o += kMiB)
        reqs.push_back({at + o, static_cast<size_t>(std::min(kMiB, len - o)), buf.data + o});
      Must(backend.ReadBatch(reqs), "read");
      total += len;
    }
  }
  return static_cast<double>(total) / Since(t0) / 1e9;
}

// RangeSummary::OfElements over `data`, leaf by leaf, on `threads` threads. GB/s.
double SummarizePass(const std::vector<double>& data, uint64_t leaf_span, int order, int threads) {
  const uint64_t elems = data.size();
  std::atomic<double> sink{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::vector<double> scratch(leaf_span);
      double local = 0;
      for (uint64_t at = t * leaf_span; at < elems; at += threads * leaf_span) {
        RangeSummary s = RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(data.data() + at),
                                                  leaf_span, scratch.data());
        local += static_cast<double>(s.values.count());
      }
      sink = sink + local;
    });
  for (auto& t : ts) t.join();
  return static_cast<double>(elems * 8) / Since(t0) / 1e9;
}

// Replays the build's pattern without summarizing: per 16 MiB chunk of the
// data extents, one ReadBatch of 1 MiB requests (what buffers/tree/tree_build.cc
// does), then the same bytes in batches of 64 and 256 MiB; and the
// summarizing alone on warm memory (up to 256 MiB), 1 and 2 threads.
BuildBreakdown ProfileBuild(const DriverContext& ctx, uint64_t leaf_span, int order) {
  BuildBreakdown b;
  IoOptions io;  // auto: io_uring with O_DIRECT where possible, as the build
  auto backend = Must(OpenIoBackend(ctx.paths.array, io), "open a read backend");
  auto ext =
      Must(DataExtents(ctx.paths.array, kNpyHeaderBytes, kNpyHeaderBytes + ctx.config.length() * 8), "data extents");
  b.read_chunked_gbs = ReadPass(ctx, *backend, ext, 16 * kMiB);
  b.read_64_gbs = ReadPass(ctx, *backend, ext, 64 * kMiB);
  b.read_window_gbs = ReadPass(ctx, *backend, ext, 256 * kMiB);

  const uint64_t elems = std::min<uint64_t>(32 * kMiB, ctx.config.region_elems() / leaf_span * leaf_span);
  std::vector<double> data(elems);
  SplitMix rng{1};
  double x = 0;
  for (double& v : data) v = x += 2 * rng.Unit() - 1;
  b.cpu1_gbs = SummarizePass(data, leaf_span, order, 1);
  b.cpu2_gbs = SummarizePass(data, leaf_span, order, 2);
  return b;
}

void TimedRebuilds(DriverContext& ctx, BufferedArray& ba) {
  Report& rep = ctx.report;
  for (int k = 0; k < std::max(1, ctx.config.builds); ++k) {
    rep.builds_on.push_back(TimedRebuild(ctx.paths, ba, TreeOptions{}));
    const BuildRun& b = rep.builds_on.back();
    std::printf("build: Rebuild (disk tier on) %.2f s wall, BuildStats %.2f s, %s read: %.0f MB/s\n", b.wall, b.seconds,
                Bytes(static_cast<double>(b.bytes)).c_str(), static_cast<double>(b.bytes) / b.wall / 1e6);
  }
  rep.breakdown = ProfileBuild(ctx, TreeOf(ba).layout().leaf_span(), TreeOf(ba).order());
  rep.have_breakdown = true;
  std::printf(
      "build profile: read pattern alone %.2f GB/s (64 MiB batches %.2f GB/s, 256 MiB %.2f GB/s); "
      "summarizing %.2f GB/s (1 thread), %.2f GB/s (2)\n",
      rep.breakdown.read_chunked_gbs, rep.breakdown.read_64_gbs, rep.breakdown.read_window_gbs, rep.breakdown.cpu1_gbs,
      rep.breakdown.cpu2_gbs);
}

}  // namespace

void RunBuild(DriverContext& ctx) {
  PhaseTimer phase(ctx, "build");
  Report& rep = ctx.report;
  ctx.paths.DropCaches();
  std::vector<std::string> notices;
  const bool first = ::access(ctx.paths.tree.c_str(), F_OK) != 0;
  const auto t0 = Clock::now();
  auto ba = OpenArray(ctx.paths, false, IoKind::kAuto, &notices);  // builds when missing or stale
  const double open_s = Since(t0);
  for (const std::string& n : notices) std::printf("open: %s\n", n.c_str());
  if (first || !notices.empty()) {
    rep.first_open = open_s;
    std::printf("build: Open built the buffer in %.2f s (%.0f MB/s of data)\n", open_s,
                static_cast<double>(rep.data_on_disk) / open_s / 1e6);
  }
  rep.tiers_on = TierText(*ba);
  std::printf("tiers: %s\n", rep.tiers_on.c_str());
  if (ctx.config.Wants("build")) TimedRebuilds(ctx, *ba);
}

}  // namespace momenta::moments_driver
