#include "bench/moments/scans.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/moments/answers.h"
#include "bench/moments/checks.h"
#include "bench/moments/files.h"
#include "bench/moments/format.h"
#include "bench/moments/reference.h"

namespace momenta::moments_driver {
namespace {

// bench/scan_numpy.py over the ranges, one line "p q seconds sum" each;
// empty when no script is configured or it fails (then says so).
std::vector<NumpyScan> RunNumpy(const DriverContext& ctx, const std::vector<Range>& ranges) {
  const Config& g = ctx.config;
  std::vector<NumpyScan> out;
  if (g.numpy_script.empty()) return out;
  std::string cmd = "'" + g.python + "' '" + g.numpy_script + "' '" + ctx.paths.array + "'";
  for (const Range& r : ranges) {  // (appends: GCC 12 warns falsely on " " + std::string)
    cmd += ' ';
    cmd += std::to_string(r.p);
    cmd += ':';
    cmd += std::to_string(r.q);
  }
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) Die("cannot run " + g.python);
  char line[512];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    unsigned long long a, b;
    double sec;
    long double sum;
    if (std::sscanf(line, "%llu %llu %lf %Lf", &a, &b, &sec, &sum) == 4) out.push_back({sec, sum});
  }
  if (::pclose(p) != 0 || out.size() != ranges.size()) {
    std::printf("numpy: %s failed; NumPy scans left out\n", g.numpy_script.c_str());
    out.clear();
  }
  return out;
}

// momenta cold, then the C++ loop (also the exact reference) on one range.
void ScanOneRange(DriverContext& ctx, BufferedArray& ba, const Range& r) {
  Report& rep = ctx.report;
  rep.scan_momenta.push_back(ColdQuery(ctx.paths, ba, r, false));
  const Sample ext = ColdQuery(ctx.paths, ba, r, true);
  DropCache(ctx.paths.array);
  const auto t0 = Clock::now();
  const Exact e = PreadScan(ctx.paths.array, r.p, r.q);
  rep.scan_cpp.push_back(Since(t0));
  std::printf("scan [%" PRIu64 ", %" PRIu64 ") %s: momenta %s, C++ pread loop %.2f s (%.2f GB/s)\n", r.p, r.q,
              Bytes(static_cast<double>((r.q - r.p) * 8)).c_str(), Ms(rep.scan_momenta.back().seconds).c_str(),
              rep.scan_cpp.back(), static_cast<double>((r.q - r.p) * 8) / rep.scan_cpp.back() / 1e9);
  CheckAnswer(ctx, "cold, scan range", r, rep.scan_momenta.back().answer, false, e);
  CheckAnswer(ctx, "cold min/max, scan", r, ext.answer, true, e);
}

}  // namespace

void RunScans(DriverContext& ctx) {
  PhaseTimer phase(ctx, "scans");
  Report& rep = ctx.report;
  const std::vector<Range>& ranges = ctx.ranges.scan_ranges;
  auto ba = OpenArray(ctx.paths, false);
  TouchRamTier(*ba);
  for (const Range& r : ranges) ScanOneRange(ctx, *ba, r);
  rep.scan_numpy = RunNumpy(ctx, ranges);
  for (size_t k = 0; k < rep.scan_numpy.size(); ++k) {
    const Range& r = ranges[k];
    const long double want = rep.scan_momenta[k].answer.sum;
    const long double rel = std::fabs(rep.scan_numpy[k].sum - want) / std::max(std::fabs(want), 1e-300L);
    std::printf("scan [%" PRIu64 ", %" PRIu64
                ") NumPy memmap %.2f s (%.2f GB/s), its sum differs from momenta's by %.1e relative\n",
                r.p, r.q, rep.scan_numpy[k].seconds,
                static_cast<double>((r.q - r.p) * 8) / rep.scan_numpy[k].seconds / 1e9, static_cast<double>(rel));
  }
}

}  // namespace momenta::moments_driver
