// The coldfio part of serve_driver: a cold single query against fio doing
// the very reads it made. Per range (data at both ends), in turn:
//   1. the array's and sidecar's pages dropped; the query asked in this
//      process (default read policy) under a ReadLog, which records every
//      read the io_uring backend submitted (after coalescing) and its round;
//   2. the pages dropped again; fio does those reads as one batch, as one
//      job: --read_iolog (v2) with --replay_no_stall, --ioengine=io_uring,
//      --iodepth, --iodepth_batch_submit and --iodepth_batch_complete_min
//      all the number of reads (one submission, one wait for all), buffered
//      with --fadvise_hint=random as momenta's descriptor (POSIX_FADV_RANDOM);
//      its figure the largest total latency (submission to completion) of
//      the batch's reads, from fio's per-read latency log (ReplayIolog);
//   3. and 4. the pages dropped before each; the same reads with one fio job
//      per read, all started together (--thread, depth 1): as issued, then
//      all O_DIRECT (widened to 4 KiB pages), which is what the buffered
//      miss costs against O_DIRECT for the very same reads.
// Only queries whose reads all went through the page cache are compared (the
// default read policy sends every short read there). Also per query: the
// device bytes this process caused (/proc/self/io) against the bytes logged,
// which shows reads outside the backend (faults on the tree's mapping), the
// rounds (ReadBatch calls that submitted reads: one is the target) and the
// query's CPU time.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

// The number after `field` (and its colon), searching fio's JSON output from
// *at; sets *at past it. -1 when absent.
double NumberAfter(const std::string& json, const std::string& field, size_t* at) {
  const size_t key = json.find("\"" + field + "\"", *at);
  const size_t colon = key == std::string::npos ? key : json.find(':', key);
  if (colon == std::string::npos) return -1;
  *at = colon + 1;
  return std::atof(json.c_str() + colon + 1);
}

// fio's latency for `reads` started together (all O_DIRECT when `all_direct`,
// else each as momenta issued it): one fio job per read (--thread, depth 1,
// --rw=read of exactly its bytes), all started at once, reported as one
// group; the figure is the group's largest total latency (lat_ns max: from a
// read's submission to its completion); -1 when a read widened to whole
// pages would pass its file's end. `shown` gets the command line the first
// time.
double ReplayThroughFio(const Context& ctx, const std::vector<LoggedRead>& reads, bool all_direct, std::string* shown) {
  std::vector<std::string> argv = {ctx.flags.fio,       "--output-format=json", "--ioengine=io_uring", "--thread",
                                   "--group_reporting", "--invalidate=1",       "--rw=read",           "--iodepth=1"};
  double want = 0;
  for (size_t k = 0; k < reads.size(); ++k) {
    LoggedRead r = reads[k];
    if (all_direct) {  // widened to whole pages, as an O_DIRECT read must be
      const uint64_t end = (r.offset + r.length + 4095) / 4096 * 4096;
      struct stat st {};
      if (::stat(r.path.c_str(), &st) != 0 || end > static_cast<uint64_t>(st.st_size)) return -1;
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

// Reads of /dev/zero after the query's reads in an iolog: fio 3.33 never
// accounts the reads still in flight when an iolog ends (all of them, for a
// log of one batch), so these keep it reaping the real batch; they complete
// inline at submission and are left out. Many of them: each reap waits for
// as many completions as the batch has reads, which sentinels may supply
// while real reads are still in flight. (They are the only reads of 512 bytes at
// offset 0: a query's reads are whole pages of the array or node runs of
// the tree, whose offset 0 is its header.)
constexpr char kSentinel[] = "/dev/zero";
constexpr unsigned long long kSentinelBytes = 512;

// fio's v2 iolog of `reads` (all buffered), then sentinels, into `path`.
void WriteIolog(const std::string& path, const std::vector<LoggedRead>& reads) {
  std::ofstream out(path, std::ios::trunc);
  out << "fio version 2 iolog\n";
  std::map<std::string, bool> files{{kSentinel, true}};
  for (const LoggedRead& r : reads) files[r.path] = true;
  for (const auto& [file, _] : files) out << file << " add\n";
  for (const auto& [file, _] : files) out << file << " open\n";
  for (const LoggedRead& r : reads) out << r.path << " read " << r.offset << ' ' << r.length << '\n';
  for (size_t k = 0; k < 8 * reads.size() + 16; ++k) out << kSentinel << " read 0 " << kSentinelBytes << '\n';
  for (const auto& [file, _] : files) out << file << " close\n";
  if (!out) Die("cannot write fio's iolog " + path);
}

// fio replaying buffered `reads` as one job, one batch: --read_iolog with
// --replay_no_stall, --iodepth, --iodepth_batch_submit and
// --iodepth_batch_complete_min all the number of reads (one submission of
// the batch, one wait for all of it). The figure: the largest total latency
// among the reads, from fio's per-read latency log. `shown` gets the
// command line the first time.
double ReplayIolog(const Context& ctx, const std::vector<LoggedRead>& reads, const std::string& dir,
                   std::string* shown) {
  const std::string log = dir + "/batch.iolog", lat = dir + "/batch_lat.1.log";
  WriteIolog(log, reads);
  const std::string depth = std::to_string(reads.size());
  const std::vector<std::string> argv = {ctx.flags.fio,
                                         "--output-format=terse",
                                         "--name=batch",
                                         "--ioengine=io_uring",
                                         "--read_iolog=" + log,
                                         "--replay_no_stall=1",
                                         "--direct=0",
                                         "--fadvise_hint=random",
                                         "--invalidate=1",
                                         "--iodepth=" + depth,
                                         "--iodepth_batch_submit=" + depth,
                                         "--iodepth_batch_complete_min=" + depth,
                                         "--log_offset=1",
                                         "--write_lat_log=" + dir + "/batch"};
  if (shown->empty())
    for (const std::string& a : argv) *shown += a + ' ';
  ::unlink(lat.c_str());
  DropCaches(ctx.flags.array, ctx.sidecar);
  std::string out;
  RunTimed(argv, &out);
  std::ifstream in(lat);
  if (!in) Die("fio wrote no latency log " + lat);
  double worst = 0, bytes = 0, want = 0;
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long time = 0, ns = 0, ddir = 0, length = 0, offset = 0;
    if (std::sscanf(line.c_str(), "%llu, %llu, %llu, %llu, %llu", &time, &ns, &ddir, &length, &offset) != 5)
      Die("cannot parse fio's latency log line '" + line + "'");
    if (length == kSentinelBytes && offset == 0) continue;
    worst = std::max(worst, static_cast<double>(ns) * 1e-9);
    bytes += static_cast<double>(length);
  }
  for (const LoggedRead& r : reads) want += static_cast<double>(r.length);
  if (bytes != want)
    Die("fio's iolog replay accounted " + std::to_string(bytes) + " bytes of the " + std::to_string(want));
  return worst;
}

bool AllBuffered(const std::vector<LoggedRead>& reads) {
  for (const LoggedRead& r : reads)
    if (r.direct) return false;
  return true;
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

// Per cold query, what was measured.
struct ColdFigures {
  std::vector<double> query, cpu, batch, jobs, jobs_direct, paired, reads, kib, rounds, waits, extra_kib;
  std::string batch_command, jobs_command;
};

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

void PrintColdFigures(const ColdFigures& f) {
  const double q = Median(f.query), b = Median(f.batch), j = Median(f.jobs), d = Median(f.jobs_direct);
  auto us = [](double seconds) { return Format("%.0f us", seconds * 1e6); };
  std::printf(
      "| cold query vs fio's one batch of its reads (iolog, depth = reads), %zu ranges (ends in data); "
      "%.1f reads / %.0f KiB per query (p50), %.2f rounds / %.2f waits (io_uring_enter) per query (mean), "
      "device bytes beyond the logged reads %.1f KiB | %s | %s | %.2fx |\n",
      f.query.size(), Median(f.reads), Median(f.kib), Mean(f.rounds), Mean(f.waits), Median(f.extra_kib), us(q).c_str(),
      us(b).c_str(), q / b);
  std::printf(
      "| the same, paired: median of each query's own query / fio batch; p90 query %s, fio %s | %.2fx | "
      "the query's CPU (this thread, user + system) p50 %s | |\n",
      us(Percentile(f.query, 0.9)).c_str(), us(Percentile(f.batch, 0.9)).c_str(), Median(f.paired),
      us(Median(f.cpu)).c_str());
  std::printf(
      "| the same reads through fio, a job per read: as issued (buffered misses) vs all O_DIRECT | %s | %s | "
      "%.2fx |\n",
      us(j).c_str(), us(d).c_str(), j / d);
  std::printf("| fio's batch, first query | %s | | |\n", f.batch_command.c_str());
  std::printf("| fio's jobs, first query | %s | | |\n", f.jobs_command.c_str());
  std::fflush(stdout);
}

void RunColdFio(Context& ctx) {
  const std::string fio = FindProgram(ctx.flags.fio);
  if (fio.empty()) {
    std::printf("| cold query vs fio | skipped: no fio at '%s' (--fio=PATH) | | |\n", ctx.flags.fio.c_str());
    return;
  }
  ctx.flags.fio = fio;
  char dir_template[] = "/tmp/momenta_coldfio_XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) Die("mkdtemp for fio's iolog");
  const std::string dir = dir_template;
  auto ba = Must(BufferedArray::Open(ctx.flags.array, BufferedArrayOptions{}), "open a reader");
  ColdFigures f;
  bool first = true;
  for (const Range& r : ctx.ranges) {
    if (r.kind != 0) continue;
    DropCaches(ctx.flags.array, ctx.sidecar);
    ReadLog log;
    const double device_before = DeviceBytes(), cpu_before = ThreadCpuSeconds(), start = Seconds();
    Must(ba->Summarize(r.p, r.q, false).status(), "query");
    const double took = Seconds() - start, used = ThreadCpuSeconds() - cpu_before;
    const double device = DeviceBytes() - device_before;
    if (first || log.reads().empty() || !AllBuffered(log.reads())) {
      first = false;  // the process's first query also pays for cold code; no read: no batch to compare
      continue;
    }
    double logged = 0;
    for (const LoggedRead& read : log.reads()) logged += static_cast<double>(read.length);
    f.query.push_back(took);
    f.cpu.push_back(used);
    f.reads.push_back(static_cast<double>(log.reads().size()));
    f.kib.push_back(logged / 1024);
    f.rounds.push_back(static_cast<double>(log.rounds()));
    f.waits.push_back(static_cast<double>(log.waits()));
    f.extra_kib.push_back((device - logged) / 1024);
    f.batch.push_back(ReplayIolog(ctx, log.reads(), dir, &f.batch_command));
    f.paired.push_back(took / f.batch.back());
    f.jobs.push_back(ReplayThroughFio(ctx, log.reads(), false, &f.jobs_command));
    const double direct = ReplayThroughFio(ctx, log.reads(), true, &f.jobs_command);
    if (direct >= 0) f.jobs_direct.push_back(direct);
    std::fprintf(stderr,
                 "coldfio: %llu:%llu query %.0f us, %zu reads in %llu rounds, fio batch %.0f us, jobs %.0f us, "
                 "jobs O_DIRECT %.0f us\n",
                 static_cast<unsigned long long>(r.p), static_cast<unsigned long long>(r.q), took * 1e6,
                 log.reads().size(), static_cast<unsigned long long>(log.rounds()), f.batch.back() * 1e6,
                 f.jobs.back() * 1e6, direct * 1e6);
  }
  (void)std::system(("rm -rf '" + dir + "'").c_str());
  if (f.query.empty()) {
    std::printf("| cold query vs fio | no query read anything through the page cache | | |\n");
    return;
  }
  PrintColdFigures(f);
}

}  // namespace momenta::serving
