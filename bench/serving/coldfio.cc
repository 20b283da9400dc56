// The coldfio part of serve_driver: a cold single query against fio doing
// the very reads it made. Per range (data at both ends), in turn:
//   1. the array's and sidecar's pages dropped; the query asked in this
//      process (default read policy) under a ReadLog, which records every
//      read the io_uring backend submitted (after coalescing) and its round;
//   2. the pages dropped again; fio does those reads as one batch: one job
//      per read (--thread, --ioengine=io_uring, depth 1, --rw=read of exactly
//      its offset and bytes, --direct as momenta issued it, buffered ones
//      with --fadvise_hint=random as momenta's descriptor), all jobs started
//      at once, reported as one group (an iolog replay at the batch's depth
//      was tried: fio 3.33 leaves the reads still in flight when the log ends
//      unaccounted, which is all of them for a one-batch log);
//   3. the pages dropped again; the same reads all O_DIRECT (widened to 4 KiB
//      pages where they are not aligned): what the buffered miss costs.
// fio's figure for a batch is the group's largest total latency (lat_ns max:
// from a read's submission to its completion). The jobs' threads start a
// little apart, so the batch is at most that deep: if anything fio's figure
// is the lower. Also per query: the device bytes this process caused
// (/proc/self/io) against the bytes logged, which shows reads outside the
// backend (faults on the tree's mapping), and the rounds (ReadBatch calls
// that submitted reads): one round is the target.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "bench/serving/phases.h"
#include "storage/io/read_log.h"

namespace momenta::serving {
namespace {

// Bytes this process caused the device to read so far (/proc/self/io).
double DeviceBytes() {
  std::ifstream in("/proc/self/io");
  std::string key;
  double value = 0;
  while (in >> key >> value)
    if (key == "read_bytes:") return value;
  return -1;
}

// The number after `field` (and its colon), searching from `from` in fio's
// JSON output; sets *at past it. -1 when absent.
double NumberAfter(const std::string& json, const std::string& field, size_t* at) {
  const size_t key = json.find("\"" + field + "\"", *at);
  const size_t colon = key == std::string::npos ? key : json.find(':', key);
  if (colon == std::string::npos) return -1;
  *at = colon + 1;
  return std::atof(json.c_str() + colon + 1);
}

// fio's latency for `reads` as one batch (all O_DIRECT when `all_direct`,
// else each as momenta issued it): one fio job per read (--thread, depth 1,
// --rw=read of exactly its bytes), all started at once, reported as one
// group; the figure is the group's largest total latency (lat_ns max: from a
// read's submission to its completion). `shown` gets the command line the
// first time.
double ReplayThroughFio(const Context& ctx, const std::vector<LoggedRead>& reads, bool all_direct, std::string* shown) {
  std::vector<std::string> argv = {ctx.flags.fio,  "--output-format=json", "--ioengine=io_uring", "--thread",
                                   "--group_reporting", "--invalidate=1", "--rw=read", "--iodepth=1"};
  double want = 0;
  for (size_t k = 0; k < reads.size(); ++k) {
    LoggedRead r = reads[k];
    if (all_direct) {  // widened to whole pages, as an O_DIRECT read must be
      const uint64_t end = (r.offset + r.length + 4095) / 4096 * 4096;
      r.offset = r.offset / 4096 * 4096;
      r.length = static_cast<size_t>(end - r.offset);
    }
    const bool direct = all_direct || r.direct;
    const std::string bytes = std::to_string(r.length);
    for (const std::string& a :
         {"--name=r" + std::to_string(k), "--filename=" + r.path, "--offset=" + std::to_string(r.offset),
          "--size=" + bytes, "--bs=" + bytes, "--direct=" + std::to_string(direct ? 1 : 0),
          // Buffered: momenta's descriptor has POSIX_FADV_RANDOM (no readahead).
          std::string(direct ? "--fadvise_hint=0" : "--fadvise_hint=random")})
      argv.push_back(a);
    want += static_cast<double>(r.length);
  }
  if (shown->empty())
    for (const std::string& a : argv) *shown += a + ' ';
  DropCaches(ctx.flags.array, ctx.sidecar);
  std::string out;
  RunTimed(argv, &out);
  size_t at = out.find("\"read\"");
  if (at == std::string::npos) Die("fio printed no read figures: " + out.substr(0, 200));
  const double bytes = NumberAfter(out, "io_bytes", &at);
  if (bytes != want)
    Die("fio read " + std::to_string(bytes) + " bytes of the " + std::to_string(want) +
        " replayed: its figure would not be the batch's");
  (void)NumberAfter(out, "lat_ns", &at);
  return NumberAfter(out, "max", &at) * 1e-9;
}

// `name` as a path: as given when it has a '/', else the first executable
// of that name on PATH; empty when there is none.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    const size_t colon = std::min(dirs.find(':', at), dirs.size());
    const std::string candidate = dirs.substr(at, colon - at) + "/" + name;
    if (colon > at && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    at = colon + 1;
  }
  return "";
}

// CPU seconds (user + system) this thread has used.
// (CLOCK_THREAD_CPUTIME_ID: the scheduler's runtime, to the nanosecond).
double ThreadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string Format(const char* format, double a, double b = 0, double c = 0) {
  char text[256];
  std::snprintf(text, sizeof text, format, a, b, c);
  return text;
}

}  // namespace

void RunColdFio(Context& ctx) {
  const std::string fio = FindProgram(ctx.flags.fio);
  if (fio.empty()) {
    std::printf("| cold query vs fio | skipped: no fio at '%s' (--fio=PATH) | | |\n", ctx.flags.fio.c_str());
    return;
  }
  ctx.flags.fio = fio;
  auto ba = Must(BufferedArray::Open(ctx.flags.array, BufferedArrayOptions{}), "open a reader");
  std::vector<double> query, as_issued, direct, reads, kib, rounds, extra_kib, cpu, paired;
  std::string shown;
  bool first = true;
  for (const Range& r : ctx.ranges) {
    if (r.kind != 0) continue;
    DropCaches(ctx.flags.array, ctx.sidecar);
    ReadLog log;
    const double device_before = DeviceBytes(), cpu_before = ThreadCpuSeconds(), start = Seconds();
    Must(ba->Summarize(r.p, r.q, false).status(), "query");
    const double took = Seconds() - start, used = ThreadCpuSeconds() - cpu_before;
    const double device = DeviceBytes() - device_before;
    if (first) {  // the process's first query also pays for cold code: not counted
      first = false;
      continue;
    }
    if (log.reads().empty()) continue;  // nothing read (all in the RAM tier): no batch to compare
    double logged = 0;
    for (const LoggedRead& read : log.reads()) logged += static_cast<double>(read.length);
    query.push_back(took);
    cpu.push_back(used);
    reads.push_back(static_cast<double>(log.reads().size()));
    kib.push_back(logged / 1024);
    rounds.push_back(static_cast<double>(log.rounds()));
    extra_kib.push_back((device - logged) / 1024);
    as_issued.push_back(ReplayThroughFio(ctx, log.reads(), false, &shown));
    paired.push_back(took / as_issued.back());
    direct.push_back(ReplayThroughFio(ctx, log.reads(), true, &shown));
    std::fprintf(stderr, "coldfio: %llu:%llu query %.0f us, %zu reads in %llu rounds, fio %.0f us, fio O_DIRECT %.0f us\n",
                 static_cast<unsigned long long>(r.p), static_cast<unsigned long long>(r.q), took * 1e6,
                 log.reads().size(), static_cast<unsigned long long>(log.rounds()), as_issued.back() * 1e6,
                 direct.back() * 1e6);
  }
  if (query.empty()) {
    std::printf("| cold query vs fio | no query read anything | | |\n");
    return;
  }
  const double q = Median(query), f = Median(as_issued);
  std::printf("| cold query vs fio, %zu ranges (ends in data), %.1f reads / %.0f KiB / %.2f rounds per query (p50)"
              ", device bytes beyond the logged reads p50 %.1f KiB | %s | fio as issued %s | %.2fx |\n",
              query.size(), Median(reads), Median(kib), Median(rounds), Median(extra_kib),
              Format("%.0f us", q * 1e6).c_str(), Format("%.0f us", f * 1e6).c_str(), q / f);
  if (!direct.empty())
    std::printf("| the same reads through fio, as issued (%zu: buffered misses) vs all O_DIRECT | %s | %s | "
                "%.2fx |\n",
                direct.size(), Format("%.0f us", f * 1e6).c_str(), Format("%.0f us", Median(direct) * 1e6).c_str(),
                f / Median(direct));
  std::printf("| the same, paired: median of each query's own query / fio; query p90 %s, fio p90 %s | %.2fx | "
              "the query's CPU (user + system, this thread) p50 %s | |\n",
              Format("%.0f us", Percentile(query, 0.9) * 1e6).c_str(),
              Format("%.0f us", Percentile(as_issued, 0.9) * 1e6).c_str(), Median(paired),
              Format("%.0f us", Median(cpu) * 1e6).c_str());
  std::printf("| fio's command for the first query (a job per read) | %s | | |\n", shown.c_str());
  std::fflush(stdout);
}

}  // namespace momenta::serving
