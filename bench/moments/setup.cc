#include "bench/moments/setup.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/moments/cleanup.h"
#include "bench/moments/files.h"
#include "bench/moments/format.h"
#include "bench/moments/ranges.h"
#include "bench/moments/split_mix.h"
#include "storage/array/array_file.h"
#include "storage/io/extents.h"
#include "storage/io/io_backend.h"

namespace momenta::moments_driver {
namespace {

constexpr uint64_t kAlignElems = kMiB / 8;  // region starts: 1 MiB aligned

// The setup text: a kept array is reused only when this matches.
std::string SetupText(const Config& g, const std::vector<uint64_t>& starts) {
  std::string t = "momenta moments_driver setup v1\n";
  t += "seed " + std::to_string(g.seed) + "\nlength " + std::to_string(g.length()) + "\nregion_elems " +
       std::to_string(g.region_elems()) + "\nregions " + std::to_string(g.regions) + "\nstarts";
  for (uint64_t s : starts) {
    t += ' ';
    t += std::to_string(s);
  }
  return t + "\n";
}

// `regions` non-overlapping, 1 MiB-aligned region starts drawn from the seed, sorted.
std::vector<uint64_t> RegionStarts(const Config& g) {
  std::mt19937_64 rng(g.seed);
  const uint64_t slots = (g.length() - g.region_elems()) / kAlignElems + 1;
  std::vector<uint64_t> starts;
  while (static_cast<int>(starts.size()) < g.regions) {
    const uint64_t s = (rng() % slots) * kAlignElems;
    bool overlaps = false;
    for (uint64_t t : starts) overlaps |= s < t + g.region_elems() && t < s + g.region_elems();
    if (!overlaps) starts.push_back(s);
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

// The kept array is the one `want` describes: same text, full size, its data allocated.
bool KeptSetupMatches(const DriverContext& ctx, const std::string& want) {
  const Config& g = ctx.config;
  std::string have;
  struct stat st;
  return g.keep && ReadFileText(ctx.paths.setup, &have) && have == want && ::stat(ctx.paths.array.c_str(), &st) == 0 &&
         static_cast<uint64_t>(st.st_size) == kNpyHeaderBytes + g.length() * 8 &&
         static_cast<uint64_t>(st.st_blocks) * 512 >= g.data_bytes();
}

// Creates the sparse array and writes each region with 8 MiB WriteRaws of a
// random walk from a random level, then syncs it.
void WriteRegions(const DriverContext& ctx, const std::vector<uint64_t>& starts) {
  const Config& g = ctx.config;
  IoOptions io;
  io.kind = IoKind::kPread;
  io.writable = true;
  const uint64_t shape[1] = {g.length()};
  auto array = Must(ArrayFile::Create(ctx.paths.array, DType::kF8, shape, io), "create the array");
  std::printf("setup: writing %d regions of %" PRIu64 " MiB (%s) into a sparse %s array...\n", g.regions, g.region_mib,
              Bytes(static_cast<double>(g.data_bytes())).c_str(), Bytes(static_cast<double>(g.length() * 8)).c_str());
  std::fflush(stdout);
  const uint64_t chunk = 8 * kMiB / 8;
  std::vector<double> buf(chunk);
  SplitMix rng{g.seed ^ 0x5eedda7aull};
  for (int r = 0; r < g.regions; ++r) {
    double x = (2 * rng.Unit() - 1) * 1000;  // a random walk from a random level
    for (uint64_t at = 0; at < g.region_elems(); at += chunk) {
      const uint64_t n = std::min(chunk, g.region_elems() - at);
      for (uint64_t k = 0; k < n; ++k) buf[k] = x += 2 * rng.Unit() - 1;
      Must(array->WriteRaw(starts[r] + at, n, reinterpret_cast<const char*>(buf.data())), "write the data");
    }
  }
  Must(array->Sync(), "sync the array");
}

Setup MakeSetup(const DriverContext& ctx) {
  const Config& g = ctx.config;
  Setup s;
  s.starts = RegionStarts(g);
  const std::string want = SetupText(g, s.starts);
  if (KeptSetupMatches(ctx, want)) {
    std::printf("setup: reusing the kept array (same seed and parameters)\n");
    s.reused = true;
    return s;
  }
  // Not reusable: start clean (an old tree must not be mistaken for current).
  RemoveDriverFiles(ctx.paths);
  const uint64_t free_bytes = FreeBytes(g.dir);
  if (free_bytes < g.data_bytes() + 2 * kGiB)
    Die(g.dir + " has " + Bytes(static_cast<double>(free_bytes)) + " free; the benchmark writes " +
        Bytes(static_cast<double>(g.data_bytes())) +
        " and needs that plus 2 GiB. Set MOMENTA_BENCH_DIR to a roomier file system, or fewer "
        "--regions / --region-mib.");
  ArmSignalCleanup(!g.keep);
  const auto t0 = Clock::now();
  WriteRegions(ctx, s.starts);
  s.write_seconds = Since(t0);
  FILE* f = std::fopen(ctx.paths.setup.c_str(), "w");
  if (f == nullptr) Die(ctx.paths.setup + ": " + std::strerror(errno));
  std::fputs(want.c_str(), f);
  std::fclose(f);
  struct stat st;
  if (::stat(ctx.paths.array.c_str(), &st) == 0)
    std::printf("setup: wrote %s in %.1f s (%.0f MB/s); %s allocated on disk\n",
                Bytes(static_cast<double>(g.data_bytes())).c_str(), s.write_seconds,
                static_cast<double>(g.data_bytes()) / s.write_seconds / 1e6,
                Bytes(static_cast<double>(st.st_blocks) * 512).c_str());
  return s;
}

uint64_t DataBytesOnDisk(const DriverContext& ctx) {
  auto ext =
      Must(DataExtents(ctx.paths.array, kNpyHeaderBytes, kNpyHeaderBytes + ctx.config.length() * 8), "data extents");
  uint64_t b = 0;
  for (const ByteRange& r : ext) b += r.end - r.begin;
  return b;
}

}  // namespace

void RunSetup(DriverContext& ctx) {
  {
    PhaseTimer phase(ctx, "setup");
    ctx.report.setup = MakeSetup(ctx);
  }
  ArmSignalCleanup(!ctx.config.keep);
  ctx.report.data_on_disk = DataBytesOnDisk(ctx);
  ctx.ranges = MakeRanges(ctx.config, ctx.report.setup);
  ctx.report.scan_ranges = ctx.ranges.scan_ranges;
}

}  // namespace momenta::moments_driver
