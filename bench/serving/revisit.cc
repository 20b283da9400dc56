// The revisit part of serve_driver: what was read stays readable. After a
// cache drop, the same ranges (data at both ends) are asked five times in a
// row through a reader with the default read policy (short reads through the
// page cache, readahead off) and through one with the policy before it
// (every aligned read O_DIRECT after a cachestat probe, readahead on); the
// two take turns going first. Per pass: the p50 latency; for the cold pass,
// the bytes this process had the device read per query (/proc/self/io
// read_bytes) and the pages left in the page cache per query (cachestat over
// the array and its tree), which is what the policy costs everything else
// cached on the machine. Each pass starts and ends with a getppid(2), so
// `strace -f` of one policy (--revisit-policy) splits its system calls by
// pass (bench/strace_passes.py).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "bench/serving/phases.h"

namespace momenta::serving {
namespace {

// Pages of `path` the page cache holds (cachestat, Linux 6.5); -1 without it.
double CachedPages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct {
    uint64_t off, len;
  } range{0, 0};  // len 0: to the end of the file
  struct {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
  } stat{};
  constexpr long kCachestat = 451;
  const long rc = ::syscall(kCachestat, fd, &range, &stat, 0);
  ::close(fd);
  return rc == 0 ? static_cast<double>(stat.nr_cache) : -1;
}

// Bytes this process caused the device to read so far (/proc/self/io).
double DeviceReadBytes() {
  std::ifstream in("/proc/self/io");
  std::string key;
  double value = 0;
  while (in >> key >> value)
    if (key == "read_bytes:") return value;
  return -1;
}

// Every clean page of the machine (echo 1 > /proc/sys/vm/drop_caches) when
// this process may, as a cold user finds it; else the array's and the
// sidecar's (POSIX_FADV_DONTNEED).
void DropAll(const Context& ctx) {
  ::sync();
  DropCaches(ctx.flags.array, ctx.sidecar);  // first: it also unmaps what this process maps of the array
  const int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd >= 0 && ::write(fd, "1", 1) == 1) {
    ::close(fd);
    return;
  }
  if (fd >= 0) ::close(fd);
}

struct PolicyRun {
  std::vector<double> pass[5];
  std::vector<double> device_bytes, cached_pages;  // per query of the cold pass, one entry per repetition
};

std::unique_ptr<BufferedArray> OpenWithPolicy(const Context& ctx, bool kept) {
  BufferedArrayOptions options;
  if (!kept) {  // the policy before reads were kept: every aligned read direct
    options.io.direct_min_bytes = 0;
    options.io.readahead = true;
    options.io.cache_first = true;
  }
  return Must(BufferedArray::Open(ctx.flags.array, options), "open a reader");
}

void RunPolicy(const Context& ctx, BufferedArray& ba, const std::vector<Range>& ranges, PolicyRun& out) {
  DropAll(ctx);
  const std::string tree = ctx.sidecar + "/tree";
  const double cached_before = CachedPages(ctx.flags.array) + CachedPages(tree);
  const double read_before = DeviceReadBytes();
  for (int pass = 0; pass < 5; ++pass) {
    (void)::syscall(SYS_getppid);  // a pass's start, for `strace -f` of the driver
    for (const Range& r : ranges) {
      const double start = Seconds();
      Must(ba.Summarize(r.p, r.q, false).status(), "query");
      out.pass[pass].push_back(Seconds() - start);
    }
    (void)::syscall(SYS_getppid);  // and its end
    if (pass == 0) {
      const double n = static_cast<double>(ranges.size());
      out.device_bytes.push_back((DeviceReadBytes() - read_before) / n);
      out.cached_pages.push_back((CachedPages(ctx.flags.array) + CachedPages(tree) - cached_before) / n);
    }
  }
}

}  // namespace

void RunRevisit(Context& ctx) {
  std::vector<Range> ranges;
  for (const Range& r : ctx.ranges)
    if (r.kind == 0) ranges.push_back(r);
  const std::string which = ctx.flags.revisit_policy;  // "both", "kept" or "direct" (strace -c of one)
  auto kept = OpenWithPolicy(ctx, true), direct = OpenWithPolicy(ctx, false);
  PolicyRun runs[2];  // [0] kept, [1] direct
  for (uint64_t rep = 0; rep < ctx.flags.revisit_reps; ++rep) {
    for (int turn = 0; turn < 2; ++turn) {
      const int policy = (turn + static_cast<int>(rep)) % 2;
      if (which != "both" && which != (policy == 0 ? "kept" : "direct")) continue;
      RunPolicy(ctx, policy == 0 ? *kept : *direct, ranges, runs[policy]);
    }
  }
  const char* names[2] = {"page cache kept (short reads buffered, no readahead)",
                          "O_DIRECT on a miss (before: direct_min_bytes 0, readahead on)"};
  for (int policy = 0; policy < 2; ++policy) {
    const PolicyRun& r = runs[policy];
    if (r.pass[0].empty()) continue;
    std::vector<double> later;
    for (int pass = 1; pass < 5; ++pass) later.insert(later.end(), r.pass[pass].begin(), r.pass[pass].end());
    char figure[256];
    std::snprintf(figure, sizeof figure, "pass 1 %.0f us; passes 2-5 %.1f us (p90 %.1f us)", Median(r.pass[0]) * 1e6,
                  Median(later) * 1e6, Percentile(later, 0.9) * 1e6);
    char cost[256];
    std::snprintf(cost, sizeof cost, "device %.0f KiB/query, %.1f pages/query left cached",
                  Median(r.device_bytes) / 1024, Median(r.cached_pages));
    std::printf("| revisit %zu ranges x5 after a drop, %s | %s | %s | |\n", ranges.size(), names[policy], figure, cost);
  }
  std::fflush(stdout);
}

}  // namespace momenta::serving
