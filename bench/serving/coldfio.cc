// The coldfio part of serve_driver: a cold single query against fio doing
// the very reads it made. Per range (data at both ends), in turn:
//   1. the array's and sidecar's pages dropped; the query asked in this
//      process (default read policy) under a ReadLog, which records every
//      read the io_uring backend submitted (after coalescing) and its round;
//   2. the pages dropped again; fio replays those reads as one batch:
//      --read_iolog (v2) with --replay_no_stall, --ioengine=io_uring,
//      --iodepth and --iodepth_batch_submit = the number of reads, so all are
//      submitted in one io_uring_enter, --direct as momenta issued them (a job
//      per kind when a query mixed them, running at once);
//   3. the pages dropped again; the same reads all O_DIRECT (a query whose
//      reads are not all 4 KiB aligned has no such figure).
// fio's figure for a batch is the largest total latency (lat_ns max: from
// its submission to its completion) among its reads: when the batch was
// whole. Also per query: the device bytes this process caused
// (/proc/self/io) against the bytes logged, which shows reads outside the
// backend (faults on the tree's mapping), and the rounds (ReadBatch calls
// that submitted reads): one round is the target.
#include <fcntl.h>
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

// The largest "max" of every "lat_ns" object in fio's JSON output, in seconds.
double MaxLatency(const std::string& json) {
  double worst = 0;
  for (size_t at = json.find("\"lat_ns\""); at != std::string::npos; at = json.find("\"lat_ns\"", at + 1)) {
    const size_t max = json.find("\"max\"", at);
    const size_t colon = max == std::string::npos ? max : json.find(':', max);
    if (colon == std::string::npos) break;
    worst = std::max(worst, std::atof(json.c_str() + colon + 1) * 1e-9);
  }
  return worst;
}

// fio's v2 iolog of `reads`, written to `path`.
void WriteIolog(const std::string& path, const std::vector<const LoggedRead*>& reads) {
  std::ofstream out(path, std::ios::trunc);
  out << "fio version 2 iolog\n";
  std::map<std::string, bool> files;
  for (const LoggedRead* r : reads) files[r->path] = true;
  for (const auto& [file, _] : files) out << file << " add\n";
  for (const auto& [file, _] : files) out << file << " open\n";
  for (const LoggedRead* r : reads) out << r->path << " read " << r->offset << ' ' << r->length << '\n';
  for (const auto& [file, _] : files) out << file << " close\n";
  if (!out) Die("cannot write fio's iolog " + path);
}

// fio's latency for `reads` as one batch per kind (direct or not; all
// O_DIRECT when `all_direct`), the jobs running at once. `shown` gets the
// command line the first time.
double ReplayThroughFio(const Context& ctx, const std::vector<LoggedRead>& reads, bool all_direct,
                        const std::string& dir, std::string* shown) {
  std::vector<const LoggedRead*> kinds[2];  // [direct]
  for (const LoggedRead& r : reads) kinds[all_direct || r.direct].push_back(&r);
  std::vector<std::string> argv = {ctx.flags.fio, "--output-format=json", "--ioengine=io_uring", "--replay_no_stall=1",
                                   "--invalidate=1"};
  for (int direct = 0; direct < 2; ++direct) {
    if (kinds[direct].empty()) continue;
    const std::string log = dir + "/iolog" + std::to_string(direct);
    WriteIolog(log, kinds[direct]);
    const std::string depth = std::to_string(kinds[direct].size());
    for (const std::string& a : {"--name=" + std::string(direct ? "direct" : "buffered"), "--read_iolog=" + log,
                                 "--direct=" + std::to_string(direct), "--iodepth=" + depth,
                                 "--iodepth_batch_submit=" + depth})
      argv.push_back(a);
  }
  if (shown->empty())
    for (const std::string& a : argv) *shown += a + ' ';
  DropCaches(ctx.flags.array, ctx.sidecar);
  std::string out;
  RunTimed(argv, &out);
  return MaxLatency(out);
}

bool AllAligned(const std::vector<LoggedRead>& reads) {
  for (const LoggedRead& r : reads)
    if (r.offset % 4096 != 0 || r.length % 4096 != 0) return false;
  return true;
}

std::string Format(const char* format, double a, double b = 0, double c = 0) {
  char text[256];
  std::snprintf(text, sizeof text, format, a, b, c);
  return text;
}

}  // namespace

void RunColdFio(Context& ctx) {
  if (std::system((ctx.flags.fio + " --version >/dev/null 2>&1").c_str()) != 0) {
    std::printf("| cold query vs fio | skipped: no fio at '%s' (--fio=PATH) | | |\n", ctx.flags.fio.c_str());
    return;
  }
  char dir_template[] = "/tmp/momenta_coldfio_XXXXXX";
  const char* tmp = ::mkdtemp(dir_template);
  if (tmp == nullptr) Die("mkdtemp for fio's iologs");
  const std::string dir = tmp;
  auto ba = Must(BufferedArray::Open(ctx.flags.array, BufferedArrayOptions{}), "open a reader");
  std::vector<double> query, as_issued, direct, reads, kib, rounds, extra_kib;
  std::string shown;
  bool first = true;
  for (const Range& r : ctx.ranges) {
    if (r.kind != 0) continue;
    DropCaches(ctx.flags.array, ctx.sidecar);
    ReadLog log;
    const double device_before = DeviceBytes(), start = Seconds();
    Must(ba->Summarize(r.p, r.q, false).status(), "query");
    const double took = Seconds() - start, device = DeviceBytes() - device_before;
    if (first) {  // the process's first query also pays for cold code: not counted
      first = false;
      continue;
    }
    if (log.reads().empty()) continue;  // nothing read (all in the RAM tier): no batch to compare
    double logged = 0;
    for (const LoggedRead& read : log.reads()) logged += static_cast<double>(read.length);
    query.push_back(took);
    reads.push_back(static_cast<double>(log.reads().size()));
    kib.push_back(logged / 1024);
    rounds.push_back(static_cast<double>(log.rounds()));
    extra_kib.push_back((device - logged) / 1024);
    as_issued.push_back(ReplayThroughFio(ctx, log.reads(), false, dir, &shown));
    if (AllAligned(log.reads())) direct.push_back(ReplayThroughFio(ctx, log.reads(), true, dir, &shown));
  }
  (void)std::system(("rm -rf " + dir).c_str());
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
    std::printf("| the same reads all O_DIRECT through fio (%zu queries aligned) | fio as issued %s | fio O_DIRECT %s | "
                "%.2fx |\n",
                direct.size(), Format("%.0f us", f * 1e6).c_str(), Format("%.0f us", Median(direct) * 1e6).c_str(),
                f / Median(direct));
  std::printf("| fio's command (per query; iodepth = its reads) | %s | | |\n", shown.c_str());
  std::fflush(stdout);
}

}  // namespace momenta::serving
