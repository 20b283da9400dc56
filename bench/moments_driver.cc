// The terabyte-scale benchmark of the moment buffer (issue 3, "Performance").
//
// Setup: a sparse 2^37-element f8 array (1 TiB) with `regions` random-walk
// regions of `region-mib` MiB each at random, seeded, non-overlapping offsets
// (1 MiB aligned), written with large sequential writes so every block is
// allocated. Then, on this machine:
//
//   build    BufferedArray::Rebuild with the default options (disk tier on,
//            1 MiB RAM budget), page cache dropped first; disk tier off too.
//            A timer breakdown of the build's pattern (reads alone, the
//            summarising alone) shows where its time goes.
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
// Flags (--name=value): see Usage() below; bench/run_moments.sh passes fio's
// figures and the NumPy script. Prints progress and a markdown table on stdout.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/moment_tree.h"
#include "buffers/range_query.h"
#include "buffers/range_summary.h"
#include "buffers/statistics.h"
#include "storage/array_file.h"
#include "storage/extents.h"
#include "storage/io_backend.h"
#include "storage/mapped_file.h"

namespace momenta {
namespace {

constexpr uint64_t kKiB = 1024, kMiB = kKiB << 10, kGiB = kMiB << 10;
constexpr uint64_t kAlignElems = kMiB / 8;  // region starts: 1 MiB aligned
constexpr const char* kArrayName = "momenta_moments_bench.npy";
constexpr const char* kSetupName = "momenta_moments_bench.setup";

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// ---- configuration ----------------------------------------------------------

struct Config {
  std::string dir;
  bool keep = false;
  uint64_t seed = 20240601;
  int length_log2 = 37;          // array elements: 2^37 f8 = 1 TiB
  int regions = 64;
  uint64_t region_mib = 128;
  int min_len_log2 = 27;         // queries: at least 2^27 elements (1 GiB)
  int queries = 200;             // cold queries, disk tier on
  int off_queries = 50;          // cold queries, disk tier off (each reads ~100 MiB)
  int scans = 5;
  int checks = 5;                // cold queries checked against an exact scan
  uint64_t scan_max_gib = 8;     // scan ranges: at most this long (then relaxed)
  uint64_t updates = 500'000;     // timed Apply updates in batches (a burst)
  uint64_t batch = 4096;
  uint64_t single_updates = 200'000;
  uint64_t sustained_updates = 4'000'000;  // then fdatasync: the write-back included
  uint64_t backend_updates = 500'000;  // per other I/O backend
  uint64_t hot_window_mib = 4;         // hot set: one window this long in each region
  int update_rounds = 5;               // warm update figures are medians of this many rounds
  std::string parts = "build,queries,scans,off,updates";
  int builds = 2;                // timed rebuilds with the disk tier on
  double fio_seq_mbs = 0;        // fio --rw=read --bs=1M --iodepth=32, MB/s
  double fio_rand_p50_us = 0;    // fio --rw=randread --bs=4k --iodepth=1, p50 clat
  double fio_rand64k_p50_us = 0; // same with --bs=64k
  std::string numpy_script;      // bench/scan_numpy.py; empty: no NumPy scans
  std::string python = "/usr/bin/python3";

  uint64_t length() const { return uint64_t{1} << length_log2; }
  uint64_t region_elems() const { return region_mib * kMiB / 8; }
  uint64_t data_bytes() const { return static_cast<uint64_t>(regions) * region_mib * kMiB; }
};

Config g;
std::string g_array, g_tree, g_setup;
// For the signal handler (unlink/rmdir only).
char g_sig_paths[5][4096];
bool g_cleanup_on_signal = false;
bool g_correct = true;  // every answer checked so far was right

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "moments_driver: %s\n", message.c_str());
  std::exit(1);
}

template <class T>
T Must(Result<T> r, const char* what) {
  if (!r.ok()) Die(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}
void Must(const Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

bool Want(const char* part) {
  const std::string p = "," + g.parts + ",";
  return p.find("," + std::string(part) + ",") != std::string::npos;
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

void Usage() {
  std::fprintf(stderr,
               "usage: moments_driver [--name=value ...]\n"
               "  --length-log2=37 --regions=64 --region-mib=128 --min-len-log2=27\n"
               "  --queries=200 --off-queries=50 --scans=5 --checks=5 --scan-max-gib=8\n"
               "  --updates=500000 --batch=4096 --single-updates=200000 --sustained-updates=4000000\n"
               "  --backend-updates=500000 --hot-window-mib=4 --update-rounds=5 --builds=2\n"
               "  --parts=build,queries,scans,off,updates   (a subset re-measures parts of a kept setup)\n"
               "  --fio-seq-mbs=X --fio-rand-p50-us=X --fio-rand64k-p50-us=X\n"
               "  --numpy-script=PATH --python=/usr/bin/python3\n"
               "  --quick   (a small setup for trying the driver: 2^32 elements, 8 x 16 MiB)\n"
               "env: MOMENTA_BENCH_DIR (default .), MOMENTA_BENCH_KEEP=1, MOMENTA_BENCH_SEED\n");
}

void ParseArgs(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      Usage();
      std::exit(0);
    }
    if (a == "--quick") {
      g.length_log2 = 32;
      g.regions = 8;
      g.region_mib = 16;
      g.min_len_log2 = 22;
      g.queries = 40;
      g.off_queries = 20;
      g.scans = 2;
      g.checks = 3;
      g.scan_max_gib = 1;
      g.updates = 200'000;
      g.single_updates = 20'000;
      g.sustained_updates = 400'000;
      g.backend_updates = 100'000;
      g.builds = 1;
      continue;
    }
    const size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) {
      Usage();
      Die("unknown argument '" + a + "'");
    }
    const std::string key = a.substr(2, eq - 2), v = a.substr(eq + 1);
    try {
      if (key == "length-log2") g.length_log2 = std::stoi(v);
      else if (key == "regions") g.regions = std::stoi(v);
      else if (key == "region-mib") g.region_mib = std::stoull(v);
      else if (key == "min-len-log2") g.min_len_log2 = std::stoi(v);
      else if (key == "queries") g.queries = std::stoi(v);
      else if (key == "off-queries") g.off_queries = std::stoi(v);
      else if (key == "scans") g.scans = std::stoi(v);
      else if (key == "checks") g.checks = std::stoi(v);
      else if (key == "scan-max-gib") g.scan_max_gib = std::stoull(v);
      else if (key == "updates") g.updates = std::stoull(v);
      else if (key == "batch") g.batch = std::stoull(v);
      else if (key == "single-updates") g.single_updates = std::stoull(v);
      else if (key == "sustained-updates") g.sustained_updates = std::stoull(v);
      else if (key == "parts") g.parts = v;
      else if (key == "backend-updates") g.backend_updates = std::stoull(v);
      else if (key == "hot-window-mib") g.hot_window_mib = std::stoull(v);
      else if (key == "update-rounds") g.update_rounds = std::max(1, std::stoi(v));
      else if (key == "builds") g.builds = std::stoi(v);
      else if (key == "fio-seq-mbs") g.fio_seq_mbs = std::stod(v);
      else if (key == "fio-rand-p50-us") g.fio_rand_p50_us = std::stod(v);
      else if (key == "fio-rand64k-p50-us") g.fio_rand64k_p50_us = std::stod(v);
      else if (key == "numpy-script") g.numpy_script = v;
      else if (key == "python") g.python = v;
      else {
        Usage();
        Die("unknown flag --" + key);
      }
    } catch (const std::exception&) {
      Die("bad value for --" + key + ": '" + v + "'");
    }
  }
  if (g.length_log2 < 20 || g.length_log2 > 40) Die("--length-log2 must be 20..40");
  if (g.regions < 2 || g.region_mib == 0) Die("need at least 2 regions of at least 1 MiB");
  if (g.data_bytes() * 4 > g.length() * 8) Die("regions cover more than a quarter of the array");
  if (g.min_len_log2 >= g.length_log2) Die("--min-len-log2 must be below --length-log2");
  if (g.batch == 0) Die("--batch must be positive");
}

// ---- small helpers ------------------------------------------------------------

void DropCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}
void DropAll() {
  DropCache(g_array);
  DropCache(g_tree);
}

std::string Bytes(double b) {
  char buf[64];
  if (b >= 10.0 * kGiB) std::snprintf(buf, sizeof buf, "%.1f GiB", b / kGiB);
  else if (b >= 10.0 * kMiB) std::snprintf(buf, sizeof buf, "%.1f MiB", b / kMiB);
  else if (b >= 10.0 * kKiB) std::snprintf(buf, sizeof buf, "%.1f KiB", b / kKiB);
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}
std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string Ms(double seconds) {
  return seconds < 0.01 ? Fmt("%.3f ms", seconds * 1e3) : Fmt("%.1f ms", seconds * 1e3);
}

std::string LoadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "?";
  char buf[128] = {0};
  if (std::fgets(buf, sizeof buf, f) == nullptr) buf[0] = 0;
  std::fclose(f);
  std::string s = buf;
  const size_t cut = s.find(' ', s.find(' ', s.find(' ') + 1) + 1);
  return s.substr(0, cut);
}

// Nearest-rank percentile of unsorted samples.
double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(k, 1, v.size()) - 1];
}
double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

struct AlignedBuffer {
  explicit AlignedBuffer(size_t n) : size(n) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, std::max<size_t>(n, 4096)) != 0) Die("out of memory");
    data = static_cast<char*>(p);
    std::memset(data, 0, n);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data;
  size_t size;
};

// A fast generator for the data (splitmix64).
struct SplitMix {
  uint64_t s;
  uint64_t operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Unit() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }  // [0, 1)
};

void OnSignal(int sig) {
  if (g_cleanup_on_signal) {
    for (int k = 0; k < 4; ++k)
      if (g_sig_paths[k][0]) ::unlink(g_sig_paths[k]);
    if (g_sig_paths[4][0]) ::rmdir(g_sig_paths[4]);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// ---- setup --------------------------------------------------------------------

struct Setup {
  std::vector<uint64_t> starts;  // element index of each region, sorted
  bool reused = false;
  double write_seconds = 0;
};

std::string SetupText(const std::vector<uint64_t>& starts) {
  std::string t = "momenta moments_driver setup v1\n";
  t += "seed " + std::to_string(g.seed) + "\nlength " + std::to_string(g.length()) +
       "\nregion_elems " + std::to_string(g.region_elems()) + "\nregions " +
       std::to_string(g.regions) + "\nstarts";
  for (uint64_t s : starts) {
    t += ' ';
    t += std::to_string(s);
  }
  return t + "\n";
}

std::vector<uint64_t> RegionStarts() {
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

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0) Die(dir + ": " + std::strerror(errno));
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

bool ReadFileText(const std::string& path, std::string* out) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  std::fclose(f);
  return true;
}

Setup MakeSetup() {
  Setup s;
  s.starts = RegionStarts();
  const std::string want = SetupText(s.starts);
  std::string have;
  struct stat st;
  if (g.keep && ReadFileText(g_setup, &have) && have == want && ::stat(g_array.c_str(), &st) == 0 &&
      static_cast<uint64_t>(st.st_size) == 4096 + g.length() * 8 &&
      static_cast<uint64_t>(st.st_blocks) * 512 >= g.data_bytes()) {
    std::printf("setup: reusing the kept array (same seed and parameters)\n");
    s.reused = true;
    return s;
  }
  // Not reusable: start clean (an old tree must not be mistaken for current).
  std::error_code ec;
  std::filesystem::remove(g_array, ec);
  std::filesystem::remove_all(SidecarPath(g_array), ec);
  std::filesystem::remove(g_setup, ec);

  const uint64_t free_bytes = FreeBytes(g.dir);
  if (free_bytes < g.data_bytes() + 2 * kGiB)
    Die(g.dir + " has " + Bytes(static_cast<double>(free_bytes)) + " free; the benchmark writes " +
        Bytes(static_cast<double>(g.data_bytes())) +
        " and needs that plus 2 GiB. Set MOMENTA_BENCH_DIR to a roomier file system, or fewer "
        "--regions / --region-mib.");

  g_cleanup_on_signal = !g.keep;
  IoOptions io;
  io.kind = IoKind::kPread;
  io.writable = true;
  const uint64_t shape[1] = {g.length()};
  auto array = Must(ArrayFile::Create(g_array, DType::kF8, shape, io), "create the array");
  std::printf("setup: writing %d regions of %" PRIu64 " MiB (%s) into a sparse %s array...\n",
              g.regions, g.region_mib, Bytes(static_cast<double>(g.data_bytes())).c_str(),
              Bytes(static_cast<double>(g.length() * 8)).c_str());
  std::fflush(stdout);
  const auto t0 = Clock::now();
  const uint64_t chunk = 8 * kMiB / 8;
  std::vector<double> buf(chunk);
  SplitMix rng{g.seed ^ 0x5eedda7aull};
  for (int r = 0; r < g.regions; ++r) {
    double x = (2 * rng.Unit() - 1) * 1000;  // a random walk from a random level
    for (uint64_t at = 0; at < g.region_elems(); at += chunk) {
      const uint64_t n = std::min(chunk, g.region_elems() - at);
      for (uint64_t k = 0; k < n; ++k) buf[k] = x += 2 * rng.Unit() - 1;
      Must(array->WriteRaw(s.starts[r] + at, n, reinterpret_cast<const char*>(buf.data())),
           "write the data");
    }
  }
  Must(array->Sync(), "sync the array");
  array.reset();
  s.write_seconds = Since(t0);
  FILE* f = std::fopen(g_setup.c_str(), "w");
  if (f == nullptr) Die(g_setup + ": " + std::strerror(errno));
  std::fputs(want.c_str(), f);
  std::fclose(f);
  if (::stat(g_array.c_str(), &st) == 0)
    std::printf("setup: wrote %s in %.1f s (%.0f MB/s); %s allocated on disk\n",
                Bytes(static_cast<double>(g.data_bytes())).c_str(), s.write_seconds,
                static_cast<double>(g.data_bytes()) / s.write_seconds / 1e6,
                Bytes(static_cast<double>(st.st_blocks) * 512).c_str());
  return s;
}

uint64_t DataBytesOnDisk() {
  auto ext = Must(DataExtents(g_array, 4096, 4096 + g.length() * 8), "data extents");
  uint64_t b = 0;
  for (const ByteRange& r : ext) b += r.end - r.begin;
  return b;
}

// ---- exact reference: a plain scan ----------------------------------------------

struct Exact {
  uint64_t n = 0;
  long double sum = 0, abs = 0, sq = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  // Elements a[0, n): lane sums in double over one chunk (<= 1M elements, an
  // error far below 1e-9 of Σ|a|), chunks added in long double.
  void Add(const double* a, size_t count) {
    double s[4] = {0, 0, 0, 0}, ab[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
    double lo[4] = {min, min, min, min}, hi[4] = {max, max, max, max};
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
      for (int l = 0; l < 4; ++l) {
        const double v = a[i + l];
        s[l] += v;
        ab[l] += std::fabs(v);
        q[l] += v * v;
        lo[l] = v < lo[l] ? v : lo[l];
        hi[l] = v > hi[l] ? v : hi[l];
      }
    }
    for (; i < count; ++i) {
      const double v = a[i];
      s[0] += v;
      ab[0] += std::fabs(v);
      q[0] += v * v;
      lo[0] = std::min(lo[0], v);
      hi[0] = std::max(hi[0], v);
    }
    for (int l = 0; l < 4; ++l) {
      sum += s[l];
      abs += ab[l];
      sq += q[l];
      min = std::min(min, lo[l]);
      max = std::max(max, hi[l]);
    }
    n += count;
  }
  long double mean() const { return sum / n; }
  long double var() const {
    const long double m = mean();
    return std::max<long double>(0, sq / n - m * m);
  }
};

// The plain C++ scan: pread [p, q) in 8 MiB chunks, summing. Cold when the
// caller dropped the cache.
Exact PreadScan(uint64_t p, uint64_t q) {
  const int fd = ::open(g_array.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die(g_array + ": " + std::strerror(errno));
  const size_t chunk = 8 * kMiB / 8;
  static std::vector<double> buf(chunk);
  Exact e;
  for (uint64_t at = p; at < q; at += chunk) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, q - at));
    size_t got = 0;
    while (got < n * 8) {
      const ssize_t r = ::pread(fd, reinterpret_cast<char*>(buf.data()) + got, n * 8 - got,
                                static_cast<off_t>(4096 + at * 8 + got));
      if (r <= 0) Die(g_array + ": short read");
      got += static_cast<size_t>(r);
    }
    e.Add(buf.data(), n);
  }
  ::close(fd);
  return e;
}

// The exact answer over [p, q) reading only the data extents (holes are
// zeros): for checking long ranges whose plain scan would take minutes.
Exact ExtentScan(uint64_t p, uint64_t q) {
  auto ext = Must(DataExtents(g_array, 4096 + p * 8, 4096 + q * 8), "data extents");
  const int fd = ::open(g_array.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die(g_array + ": " + std::strerror(errno));
  const size_t chunk = 8 * kMiB / 8;
  static std::vector<double> buf(chunk);
  Exact e;
  uint64_t covered = 0;
  for (const ByteRange& r : ext) {
    const uint64_t a = (r.begin - 4096) / 8, b = std::min(q, (r.end - 4096 + 7) / 8);
    for (uint64_t at = std::max(a, p); at < b; at += chunk) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, b - at));
      if (::pread(fd, buf.data(), n * 8, static_cast<off_t>(4096 + at * 8)) != static_cast<ssize_t>(n * 8))
        Die(g_array + ": short read");
      e.Add(buf.data(), n);
      covered += n;
    }
  }
  ::close(fd);
  if (covered < q - p) {  // holes: zeros
    const double zero = 0;
    const uint64_t holes = q - p - covered;
    e.Add(&zero, 1);
    e.n += holes - 1;
  }
  return e;
}

// ---- momenta answers --------------------------------------------------------------

struct Answer {
  long double sum = 0, mean = 0, var = 0;
  double min = 0, max = 0;
};

struct Range {
  uint64_t p = 0, q = 0;
  int kind = 0;  // 0: both ends inside written regions; 1: anywhere
};

struct Sample {
  double seconds = 0;
  QueryCost cost;
  Answer answer;
  int kind = 0;
};

long double StatValue(Stat s, const RangeSummary& r, uint64_t p) {
  StatParams params;
  auto a = ComputeStat(s, params, r, p, DType::kF8);
  if (!a.ok()) Die("ComputeStat: " + a.status().ToString());
  return a->values[0];
}

// One cold query: caches dropped (untimed), then Summarize + the stats.
Sample ColdQuery(BufferedArray& ba, const Range& r, bool extremes) {
  DropAll();
  Sample s;
  s.kind = r.kind;
  const auto t0 = Clock::now();
  auto summary = ba.Summarize(r.p, r.q, extremes, &s.cost);
  if (!summary.ok()) Die("Summarize: " + summary.status().ToString());
  if (extremes) {
    s.answer.min = static_cast<double>(StatValue(Stat::kMin, *summary, r.p));
    s.answer.max = static_cast<double>(StatValue(Stat::kMax, *summary, r.p));
  } else {
    s.answer.sum = StatValue(Stat::kSum, *summary, r.p);
    s.answer.mean = StatValue(Stat::kMean, *summary, r.p);
    s.answer.var = StatValue(Stat::kVar, *summary, r.p);
  }
  s.seconds = Since(t0);
  return s;
}

// |got - want| relative to |want|, and relative to the reference scale of the
// accuracy bound (DESIGN.md §5).
struct Err {
  long double rel = 0, scaled = 0;
};
Err ErrorOf(long double got, long double want, long double scale) {
  const long double d = std::fabs(got - want);
  return {want != 0 ? d / std::fabs(want) : d, scale > 0 ? d / scale : d};
}

// Prints one check line and records a failure. Passes when within 1e-9 of
// the value itself, or (for values near 0 by cancellation) within 1e-9 of
// the bound's scale (Σ|a|, Σ|a|/n, Σa²/n).
void CheckAnswer(const char* label, const Range& r, const Answer& m, bool extremes, const Exact& e) {
  bool ok = true;
  std::string line;
  if (extremes) {
    ok = m.min == e.min && m.max == e.max;
    line = Fmt("min %.17g", m.min) + Fmt(" (exact %.17g),", e.min) + Fmt(" max %.17g", m.max) +
           Fmt(" (exact %.17g)", e.max);
  } else {
    const long double n = static_cast<long double>(e.n);
    const Err es = ErrorOf(m.sum, e.sum, e.abs), em = ErrorOf(m.mean, e.mean(), e.abs / n),
              ev = ErrorOf(m.var, e.var(), e.sq / n);
    for (const Err& x : {es, em, ev}) ok &= x.rel <= 1e-9L || x.scaled <= 1e-9L;
    line = Fmt("sum %.12e", static_cast<double>(m.sum)) +
           Fmt(" rel.err %.1e", static_cast<double>(es.rel)) +
           Fmt(", mean rel.err %.1e", static_cast<double>(em.rel)) +
           Fmt(", var rel.err %.1e", static_cast<double>(ev.rel));
  }
  std::printf("check %-22s [%" PRIu64 ", %" PRIu64 ") %s: %s  %s\n", label, r.p, r.q,
              r.kind == 0 ? "data ends" : "anywhere ", ok ? "OK" : "WRONG", line.c_str());
  g_correct &= ok;
}

// ---- query sets ---------------------------------------------------------------------

struct QuerySet {
  std::vector<Range> ranges;
  std::vector<Range> scan_ranges;
};

QuerySet MakeRanges(const Setup& s) {
  std::mt19937_64 rng(g.seed + 1);
  const uint64_t n = g.length(), min_len = uint64_t{1} << g.min_len_log2;
  auto data_index = [&] { return s.starts[rng() % s.starts.size()] + rng() % g.region_elems(); };
  QuerySet set;
  const int count = std::max(g.queries, g.off_queries);
  for (int k = 0; k < count; ++k) {
    Range r;
    r.kind = k % 2;
    while (true) {
      uint64_t a, b;
      if (r.kind == 0) {
        a = data_index();
        b = data_index() + 1;  // q - 1 is a data element
      } else {
        a = rng() % (n + 1);
        b = rng() % (n + 1);
      }
      if (a > b) std::swap(a, b);
      if (b - a >= min_len) {
        r.p = a;
        r.q = b;
        break;
      }
    }
    set.ranges.push_back(r);
  }
  // Scan ranges: data at both ends, at most scan_max_gib long (relaxed if the
  // regions lie too far apart), so that a full scan takes seconds.
  uint64_t max_len = std::max(min_len * 2, g.scan_max_gib * kGiB / 8);
  while (static_cast<int>(set.scan_ranges.size()) < g.scans) {
    bool found = false;
    for (int attempt = 0; attempt < 200000 && !found; ++attempt) {
      uint64_t a = data_index(), b = data_index() + 1;
      if (a > b) std::swap(a, b);
      if (b - a >= min_len && b - a <= max_len) {
        set.scan_ranges.push_back({a, b, 0});
        found = true;
      }
    }
    if (!found) max_len *= 2;
  }
  return set;
}

// ---- the buffered array -----------------------------------------------------------

std::unique_ptr<BufferedArray> OpenArray(bool writable, IoKind kind = IoKind::kAuto,
                                         std::vector<std::string>* notices = nullptr) {
  BufferedArrayOptions o;
  o.io.kind = kind;
  o.io.writable = writable;
  return Must(BufferedArray::Open(g_array, o, notices), "open the buffered array");
}

// Touches every RAM-tier node once through the mapping, as any process that
// has answered a query has: those pages then stay (mapped pages are not
// dropped by POSIX_FADV_DONTNEED). The disk tier is never touched this way.
void TouchRamTier(BufferedArray& ba) {
  MomentTree& t = ba.tree();
  const TreeLayout& l = t.layout();
  volatile double sink = 0;
  for (int level = l.ram_from(); level <= l.levels(); ++level)
    for (uint64_t j = 0; j < l.nodes(level); ++j) sink = sink + t.Node(level, j)[0];
  (void)sink;
}

std::string TierText(BufferedArray& ba) {
  MomentTree& t = ba.tree();
  const TreeLayout& l = t.layout();
  std::string s = "leaf " + std::to_string(l.leaf_span()) + " elements (" +
                  Bytes(static_cast<double>(l.leaf_span() * 8)) + "), " +
                  std::to_string(l.levels()) + " levels, fanout " + std::to_string(l.fanout()) +
                  ", RAM tier levels " + std::to_string(l.ram_from()) + ".." +
                  std::to_string(l.levels()) + " = " + Bytes(static_cast<double>(t.ram_tier_bytes()));
  if (l.ram_from() > 1)
    s += ", disk tier levels 1.." + std::to_string(l.ram_from() - 1) + " = " +
         Bytes(static_cast<double>(t.disk_tier_bytes())) + " (sparse)";
  return s;
}

// ---- build ----------------------------------------------------------------------------

struct BuildRun {
  double wall = 0;    // the whole Rebuild call
  double seconds = 0; // BuildStats::seconds (the streaming pass and the upper levels)
  uint64_t bytes = 0;
};

BuildRun TimedRebuild(BufferedArray& ba, const TreeOptions& options) {
  DropAll();
  const auto t0 = Clock::now();
  auto st = Must(ba.Rebuild(options), "rebuild");
  BuildRun r{Since(t0), st.seconds, st.data_bytes_read};
  return r;
}

struct BuildBreakdown {
  double read_chunked_gbs = 0;  // the build's read pattern alone
  double read_64_gbs = 0;       // the same bytes, 64 MiB per batch
  double read_window_gbs = 0;   // the same bytes, 256 MiB per batch
  double cpu1_gbs = 0, cpu2_gbs = 0;  // summarising in-memory leaves, 1 and 2 threads
};

// Replays the build's pattern without summarising: per 16 MiB chunk of the
// data extents, one ReadBatch of 1 MiB requests (what buffers/tree_build.cc
// does), then the same bytes in batches of 256 MiB; and the summarising
// alone on warm memory.
BuildBreakdown ProfileBuild(uint64_t leaf_span, int order) {
  BuildBreakdown b;
  IoOptions io;  // auto: io_uring with O_DIRECT where possible, as the build
  auto backend = Must(OpenIoBackend(g_array, io), "open a read backend");
  auto ext = Must(DataExtents(g_array, 4096, 4096 + g.length() * 8), "data extents");
  auto pass = [&](uint64_t batch_bytes) {
    AlignedBuffer buf(batch_bytes);
    DropCache(g_array);
    uint64_t total = 0;
    const auto t0 = Clock::now();
    std::vector<ReadRequest> reqs;
    for (const ByteRange& r : ext) {
      for (uint64_t at = r.begin; at < r.end; at += batch_bytes) {
        const uint64_t len = std::min(batch_bytes, r.end - at);
        reqs.clear();
        for (uint64_t o = 0; o < len; o += kMiB)
          reqs.push_back({at + o, static_cast<size_t>(std::min(kMiB, len - o)), buf.data + o});
        Must(backend->ReadBatch(reqs), "read");
        total += len;
      }
    }
    return static_cast<double>(total) / Since(t0) / 1e9;
  };
  b.read_chunked_gbs = pass(16 * kMiB);
  b.read_64_gbs = pass(64 * kMiB);
  b.read_window_gbs = pass(256 * kMiB);

  // CPU: RangeSummary::OfElements over 256 MiB of warm data, leaf by leaf.
  const uint64_t elems = std::min<uint64_t>(32 * kMiB, g.region_elems() / leaf_span * leaf_span);
  std::vector<double> data(elems);
  SplitMix rng{1};
  double x = 0;
  for (double& v : data) v = x += 2 * rng.Unit() - 1;
  auto cpu = [&](int threads) {
    std::atomic<double> sink{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        std::vector<double> scratch(leaf_span);
        double local = 0;
        for (uint64_t at = t * leaf_span; at < elems; at += threads * leaf_span) {
          RangeSummary s = RangeSummary::OfElements(order, DType::kF8,
                                                    reinterpret_cast<const char*>(data.data() + at),
                                                    leaf_span, scratch.data());
          local += static_cast<double>(s.values.count());
        }
        sink = sink + local;
      });
    for (auto& t : ts) t.join();
    return static_cast<double>(elems * 8) / Since(t0) / 1e9;
  };
  b.cpu1_gbs = cpu(1);
  b.cpu2_gbs = cpu(2);
  return b;
}

// ---- query runs -------------------------------------------------------------------------

struct QueryRun {
  std::string label;
  std::vector<Sample> samples;
};

struct QueryRow {
  double p50 = 0, p99 = 0, mean = 0, max = 0;
  double array_bytes = 0, tier_bytes = 0, requests = 0;
  size_t n = 0;
};

QueryRow Summarise(const QueryRun& run, int kind /* -1: all */) {
  std::vector<double> t;
  QueryRow row;
  for (const Sample& s : run.samples) {
    if (kind >= 0 && s.kind != kind) continue;
    t.push_back(s.seconds);
    row.array_bytes += static_cast<double>(s.cost.array_bytes);
    row.tier_bytes += static_cast<double>(s.cost.tier_bytes);
    row.requests += static_cast<double>(s.cost.requests);
  }
  row.n = t.size();
  if (t.empty()) return row;
  row.p50 = Percentile(t, 0.5);
  row.p99 = Percentile(t, 0.99);
  row.mean = Mean(t);
  row.max = *std::max_element(t.begin(), t.end());
  row.array_bytes /= static_cast<double>(row.n);
  row.tier_bytes /= static_cast<double>(row.n);
  row.requests /= static_cast<double>(row.n);
  return row;
}

QueryRun RunQueries(BufferedArray& ba, const std::vector<Range>& ranges, int count, bool extremes,
                    const std::string& label) {
  QueryRun run{label, {}};
  const auto t0 = Clock::now();
  for (int k = 0; k < count && k < static_cast<int>(ranges.size()); ++k)
    run.samples.push_back(ColdQuery(ba, ranges[k], extremes));
  const QueryRow all = Summarise(run, -1);
  std::printf("queries %-34s n=%zu p50 %s p99 %s mean %s; array %s, tier %s, %.1f requests per query"
              " (%.0f s with the drops)\n",
              label.c_str(), all.n, Ms(all.p50).c_str(), Ms(all.p99).c_str(), Ms(all.mean).c_str(),
              Bytes(all.array_bytes).c_str(), Bytes(all.tier_bytes).c_str(), all.requests, Since(t0));
  std::fflush(stdout);
  return run;
}

// Compares two runs' answers on the same ranges (disk tier on vs off).
void CompareRuns(const QueryRun& a, const QueryRun& b, bool extremes) {
  long double worst = 0;
  size_t n = std::min(a.samples.size(), b.samples.size()), bad = 0;
  for (size_t k = 0; k < n; ++k) {
    const Answer &x = a.samples[k].answer, &y = b.samples[k].answer;
    if (extremes) {
      bad += x.min != y.min || x.max != y.max;
      continue;
    }
    for (auto [u, v] : {std::pair{x.sum, y.sum}, {x.mean, y.mean}, {x.var, y.var}}) {
      const long double d = std::fabs(u - v) / std::max(std::fabs(v), 1e-300L);
      worst = std::max(worst, d);
      bad += d > 2e-9L;
    }
  }
  std::printf("check %s vs %s on %zu ranges: %s (largest relative difference %.1e)\n",
              a.label.c_str(), b.label.c_str(), n, bad == 0 ? "OK" : "DIFFER",
              static_cast<double>(worst));
  g_correct &= bad == 0;
}

// ---- NumPy -------------------------------------------------------------------------------

struct NumpyScan {
  double seconds = 0;
  long double sum = 0;
};

std::vector<NumpyScan> RunNumpy(const std::vector<Range>& ranges) {
  std::vector<NumpyScan> out;
  if (g.numpy_script.empty()) return out;
  std::string cmd = "'" + g.python + "' '" + g.numpy_script + "' '" + g_array + "'";
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

// ---- updates -------------------------------------------------------------------------------

std::vector<IndexedValue> MakeUpdates(const Setup& s, std::mt19937_64& rng, uint64_t n) {
  std::vector<IndexedValue> u(n);
  std::uniform_real_distribution<double> value(-4096, 4096);
  for (IndexedValue& x : u) {
    x.index = s.starts[rng() % s.starts.size()] + rng() % g.region_elems();
    x.value = Value::Float(value(rng));
  }
  return u;
}

// The hot set: one window of hot_window_mib in each region, at a random
// page-aligned place; updates at random elements inside the windows.
std::vector<uint64_t> HotWindows(const Setup& s, std::mt19937_64& rng) {
  const uint64_t window = g.hot_window_mib * kMiB / 8;
  std::vector<uint64_t> w;
  for (uint64_t start : s.starts) w.push_back(start + (rng() % (g.region_elems() - window + 1)) / 512 * 512);
  return w;
}

std::vector<IndexedValue> MakeHotUpdates(const std::vector<uint64_t>& windows, std::mt19937_64& rng, uint64_t n) {
  const uint64_t window = g.hot_window_mib * kMiB / 8;
  std::vector<IndexedValue> u(n);
  std::uniform_real_distribution<double> value(-4096, 4096);
  for (IndexedValue& x : u) {
    x.index = windows[rng() % windows.size()] + rng() % window;
    x.value = Value::Float(value(rng));
  }
  return u;
}

// One update per 4 KiB page of every window: afterwards the hot set is
// resident, mapped and dirty, as it is for a writer that keeps updating it.
std::vector<IndexedValue> TouchHotPages(const std::vector<uint64_t>& windows) {
  const uint64_t window = g.hot_window_mib * kMiB / 8;
  std::vector<IndexedValue> u;
  for (uint64_t w : windows)
    for (uint64_t at = 0; at < window; at += 512) u.push_back({w + at, Value::Float(static_cast<double>(at)), kLogTimeNow});
  return u;
}

// The kernel's floor for the same updates: each element's own 8 bytes loaded
// and stored back through a fresh shared mapping of the array (advised
// random, as BufferedArray's is), no tree, no log: what any writer that
// updates the file in place pays to dirty the pages. Updates/s.
double BareStores(BufferedArray& ba, const std::vector<IndexedValue>& u) {
  auto map = Must(MappedFile::Open(g_array, /*writable=*/true), "map the array");
  map->AdviseRandomAccess();
  char* const base = map->data();
  const auto t0 = Clock::now();
  for (const IndexedValue& x : u) {
    volatile uint64_t* e = reinterpret_cast<volatile uint64_t*>(base + ba.array().ByteOffset(x.index));
    *e = *e;
  }
  const double rate = static_cast<double>(u.size()) / Since(t0);
  Must(map->FlushAll(), "msync the array");
  return rate;
}

// The same floor through pwrite: each element's own bytes (read before the
// clock starts) written back with one pwrite each. Updates/s.
double BarePwrites(BufferedArray& ba, const std::vector<IndexedValue>& u) {
  const int fd = ::open(g_array.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) Die(g_array + ": " + std::strerror(errno));
  std::vector<uint64_t> old(u.size());
  for (size_t k = 0; k < u.size(); ++k)
    if (::pread(fd, &old[k], 8, static_cast<off_t>(ba.array().ByteOffset(u[k].index))) != 8) Die(g_array + ": read failed");
  const auto t0 = Clock::now();
  for (size_t k = 0; k < u.size(); ++k)
    if (::pwrite(fd, &old[k], 8, static_cast<off_t>(ba.array().ByteOffset(u[k].index))) != 8) Die(g_array + ": write failed");
  const double rate = static_cast<double>(u.size()) / Since(t0);
  if (::fdatasync(fd) != 0) Die(g_array + ": fdatasync failed");
  ::close(fd);
  return rate;
}

double ThreadCpuSeconds() {
  timespec ts;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Updates/s of wall time; *per_cpu_second (optional) gets updates per second
// of this thread's CPU time (user and kernel), which other processes taking
// the CPU do not lower.
double ApplyBatches(BufferedArray& ba, const std::vector<IndexedValue>& u, uint64_t batch,
                    double* per_cpu_second = nullptr) {
  const auto t0 = Clock::now();
  const double c0 = ThreadCpuSeconds();
  for (uint64_t at = 0; at < u.size(); at += batch) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(batch, u.size() - at));
    Must(ba.Apply(std::span<const IndexedValue>(u.data() + at, n)), "apply");
  }
  if (per_cpu_second) *per_cpu_second = static_cast<double>(u.size()) / (ThreadCpuSeconds() - c0);
  return static_cast<double>(u.size()) / Since(t0);
}

void WarmData(const Setup& s) {
  const int fd = ::open(g_array.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die(g_array + ": " + std::strerror(errno));
  for (uint64_t start : s.starts) ::posix_fadvise(fd, 4096 + start * 8, g.region_elems() * 8, POSIX_FADV_WILLNEED);
  std::vector<char> buf(8 * kMiB);
  for (uint64_t start : s.starts)
    for (uint64_t at = 0; at < g.region_elems() * 8; at += buf.size())
      if (::pread(fd, buf.data(), buf.size(), static_cast<off_t>(4096 + start * 8 + at)) < 0)
        Die(g_array + ": read failed");
  ::close(fd);
}

// ---- what else the machine did meanwhile ----------------------------------------------------

// CPU use of the whole machine and of this process, and the device's
// traffic, to tell which figures were measured on a busy machine.
struct Snapshot {
  Clock::time_point t;
  uint64_t busy = 0, mine = 0;         // clock ticks: all CPUs busy, this process
  uint64_t dev_read = 0, dev_write = 0;  // bytes the file system's device moved
  bool have_dev = false;
};

std::pair<unsigned, unsigned> g_device{0, 0};  // major, minor of MOMENTA_BENCH_DIR's device

Snapshot Snap() {
  Snapshot s;
  s.t = Clock::now();
  if (FILE* f = std::fopen("/proc/stat", "r")) {
    unsigned long long v[8] = {0};
    if (std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                    &v[6], &v[7]) == 8)
      s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    std::fclose(f);
  }
  std::string stat;
  if (ReadFileText("/proc/self/stat", &stat)) {
    const size_t close = stat.rfind(')');
    unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
    // After ") ": state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
    if (close != std::string::npos &&
        std::sscanf(stat.c_str() + close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                    &ut, &st, &cut, &cst) == 4)
      s.mine = ut + st + cut + cst;
  }
  if (FILE* f = std::fopen("/proc/diskstats", "r")) {
    unsigned major, minor;
    char name[64];
    unsigned long long f1, f2, sectors_read, f4, f5, f6, sectors_written;
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu", &major, &minor, name, &f1, &f2,
                      &sectors_read, &f4, &f5, &f6, &sectors_written) == 10 &&
          major == g_device.first && minor == g_device.second) {
        s.dev_read = sectors_read * 512;
        s.dev_write = sectors_written * 512;
        s.have_dev = true;
      }
    }
    std::fclose(f);
  }
  return s;
}

struct PhaseUse {
  std::string phase;
  double seconds = 0;
  double others_cores = 0;             // CPUs busy with other processes, on average
  double dev_read = 0, dev_write = 0;  // bytes the device moved in all, this run's included
  bool have_dev = false;
  // Other processes' disk use cannot be told apart reliably (io_uring's
  // O_DIRECT reads are not in /proc/self/io), so only CPU marks a busy phase.
  bool busy() const { return others_cores > 0.25; }
  std::string Text() const {
    std::string s = Fmt("other processes used %.2f CPUs", others_cores);
    if (have_dev) s += "; the device moved " + Bytes(dev_read) + " read, " + Bytes(dev_write) + " written (this run's included)";
    return s;
  }
};
std::vector<PhaseUse> g_usage;

// Times one phase of the run and records what others did meanwhile.
class Phase {
 public:
  explicit Phase(std::string name) : name_(std::move(name)), start_(Snap()) {}
  ~Phase() {
    const Snapshot end = Snap();
    PhaseUse u;
    u.phase = name_;
    u.seconds = std::chrono::duration<double>(end.t - start_.t).count();
    const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
    const double others = static_cast<double>(end.busy - start_.busy) - static_cast<double>(end.mine - start_.mine);
    u.others_cores = std::max(0.0, others / ticks / std::max(u.seconds, 1e-3));
    u.have_dev = end.have_dev;
    const auto delta = [](uint64_t a, uint64_t b) { return b > a ? static_cast<double>(b - a) : 0.0; };
    u.dev_read = delta(start_.dev_read, end.dev_read);
    u.dev_write = delta(start_.dev_write, end.dev_write);
    std::printf("phase %-10s %.0f s; %s%s\n", name_.c_str(), u.seconds, u.Text().c_str(),
                u.busy() ? "  <- a busy machine: these figures may be disturbed" : "");
    g_usage.push_back(u);
  }

 private:
  std::string name_;
  Snapshot start_;
};

uint64_t MeminfoKiB(const char* key) {
  std::string text;
  if (!ReadFileText("/proc/meminfo", &text)) return 0;
  const size_t at = text.find(std::string(key) + ":");
  return at == std::string::npos ? 0 : std::strtoull(text.c_str() + at + std::strlen(key) + 1, nullptr, 10);
}
uint64_t VmstatPages(const char* key) {
  std::string text;
  if (!ReadFileText("/proc/vmstat", &text)) return 0;
  const size_t at = text.find(std::string(key) + " ");
  return at == std::string::npos ? 0 : std::strtoull(text.c_str() + at + std::strlen(key) + 1, nullptr, 10);
}

// ---- the report ------------------------------------------------------------------------------

struct Report {
  Setup setup;
  uint64_t data_on_disk = 0;
  std::string tiers_on, tiers_off;
  std::vector<BuildRun> builds_on;
  BuildRun build_off;
  double first_open = 0;      // seconds of the first Open when it built the buffer
  uint64_t leaf_off = 0;      // leaf span with the disk tier off
  double off_scratch_ms = 0;  // allocating a query's scratch with the disk tier off
  bool have_breakdown = false;
  BuildBreakdown breakdown;
  QueryRun on, on_ext, off, off_ext;
  std::vector<Range> scan_ranges;
  std::vector<Sample> scan_momenta;
  std::vector<double> scan_cpp;
  std::vector<NumpyScan> scan_numpy;
  bool have_updates = false;
  double upd_burst = 0, upd_single = 0, upd_sustained = 0;
  double upd_floor = 0, upd_floor_pwrite = 0, upd_hot_cpu = 0, upd_hot = 0, upd_hot_single = 0;
  uint64_t hot_pages = 0;
  double sustained_apply_s = 0, sustained_sync_s = 0;
  double dirty_after_burst_mib = 0, dirty_threshold_mib = 0, dirty_background_mib = 0;
  uint64_t updates_total = 0;
  std::map<std::string, double> upd_backend;
  double t_stat = 0;
  bool have_verify = false;
  VerifyReport verify;
  double verify_seconds = 0;
};

std::string Verdict(bool ok) { return ok ? "met" : "**missed**"; }

void PrintTable(const Report& r) {
  const double fio = g.fio_seq_mbs * 1e6;
  const double data = static_cast<double>(r.data_on_disk);
  // Build speed: the written data over the whole Rebuild call.
  auto build_bs = [&](const BuildRun& b) { return data / b.wall; };

  std::printf("\n## Results\n\n");
  std::printf("Array: 2^%d f8 elements (%s), %d regions x %" PRIu64 " MiB = %s of data; seed %" PRIu64 ".\n",
              g.length_log2, Bytes(static_cast<double>(g.length() * 8)).c_str(), g.regions, g.region_mib,
              Bytes(data).c_str(), g.seed);
  if (!r.tiers_on.empty()) std::printf("Disk tier on: %s.\n", r.tiers_on.c_str());
  if (!r.tiers_off.empty()) std::printf("Disk tier off: %s.\n", r.tiers_off.c_str());

  std::printf("\n| measure | momenta | reference | target | verdict |\n|---|---:|---:|---|---|\n");
  if (!r.builds_on.empty()) {
    BuildRun best = r.builds_on.front();
    std::string runs;
    for (const BuildRun& b : r.builds_on) {
      if (b.wall < best.wall) best = b;
      runs += (runs.empty() ? "" : ", ") + Fmt("%.2f", b.wall);
    }
    if (r.first_open > 0) runs += Fmt("; first Open %.2f", r.first_open);
    const std::string ref = fio > 0 ? Fmt("fio seq read %.0f MB/s", fio / 1e6) : "fio n/a";
    const std::string verdict =
        fio > 0 ? Fmt("%.0f%% of fio: ", 100 * build_bs(best) / fio) + Verdict(build_bs(best) >= 0.8 * fio) : "fio n/a";
    std::printf("| build, disk tier on, best of %zu (%s s) | %.0f MB/s | %s | >= 80%% of fio | %s |\n",
                r.builds_on.size(), runs.c_str(), build_bs(best) / 1e6, ref.c_str(), verdict.c_str());
  }
  if (r.build_off.wall > 0)
    std::printf("| build, disk tier off (%.2f s; reads %s: whole 2^%d-element leaves, holes too) | %.0f MB/s | | | %s |\n",
                r.build_off.wall, Bytes(static_cast<double>(r.build_off.bytes)).c_str(),
                static_cast<int>(std::log2(static_cast<double>(r.leaf_off))), build_bs(r.build_off) / 1e6,
                fio > 0 ? Fmt("%.0f%% of fio", 100 * build_bs(r.build_off) / fio).c_str() : "");
  const QueryRow on = Summarise(r.on, -1), off = Summarise(r.off, -1);
  if (on.n > 0) {
    const std::string floor =
        g.fio_rand_p50_us > 0 ? Fmt("fio randread p50: 4 KiB %.0f us", g.fio_rand_p50_us) +
                                    Fmt(", 64 KiB %.0f us", g.fio_rand64k_p50_us)
                              : "fio n/a";
    std::printf("| cold query p50, disk tier on (sum+mean+var) | %s | %s | <= 2 ms | %s |\n", Ms(on.p50).c_str(),
                floor.c_str(), Verdict(on.p50 <= 2e-3).c_str());
    std::printf("| cold query p99, disk tier on | %s | | | |\n", Ms(on.p99).c_str());
  }
  if (off.n > 0)
    std::printf("| cold query p50 / p99, disk tier off (paper) | %s / %s | | | %s |\n", Ms(off.p50).c_str(),
                Ms(off.p99).c_str(), on.n > 0 ? Fmt("%.0fx the disk tier's p50", off.p50 / on.p50).c_str() : "");
  if (!r.scan_cpp.empty()) {
    double m = 0, c = 0, n = 0;
    for (size_t k = 0; k < r.scan_cpp.size(); ++k) {
      m += r.scan_momenta[k].seconds;
      c += r.scan_cpp[k];
      if (!r.scan_numpy.empty()) n += r.scan_numpy[k].seconds;
    }
    const double k = static_cast<double>(r.scan_cpp.size());
    std::printf("| scan of the same ranges, C++ pread loop (mean of %zu) | %.2f s | momenta %s on them | | %.0fx momenta's time |\n",
                r.scan_cpp.size(), c / k, Ms(m / k).c_str(), c / m);
    if (!r.scan_numpy.empty())
      std::printf("| scan of the same ranges, NumPy memmap (mean of %zu) | %.2f s | | | %.0fx momenta's time |\n",
                  r.scan_numpy.size(), n / k, n / m);
  }
  if (r.have_updates) {
    std::printf("| warm updates to a hot set (%s resident and dirty, in %d windows), Apply batches of %" PRIu64 ", median of %d rounds | %.2f M/s | %.2f M per second of CPU | >= 1 M/s | %s |\n",
                Bytes(static_cast<double>(r.hot_pages) * 4096).c_str(), g.regions, g.batch, g.update_rounds, r.upd_hot / 1e6,
                r.upd_hot_cpu / 1e6,
                Verdict(r.upd_hot >= 1e6).c_str());
    std::printf("| warm updates to the hot set, one Apply per update | %.2f M/s | | | |\n", r.upd_hot_single / 1e6);
    std::printf("| warm updates scattered over all %s of data (each dirties a clean cached page), batches of %" PRIu64 ", median | %.2f M/s | kernel floor: bare stores %.2f M/s, bare pwrites %.2f M/s (same pages) | | %.0f%% of the faster floor |\n",
                Bytes(static_cast<double>(g.data_bytes())).c_str(), g.batch, r.upd_burst / 1e6, r.upd_floor / 1e6,
                r.upd_floor_pwrite / 1e6, 100 * r.upd_burst / std::max(r.upd_floor, r.upd_floor_pwrite));
    std::printf("| warm scattered updates, one Apply per update | %.2f M/s | | | |\n", r.upd_single / 1e6);
    std::printf("| sustained updates: %s in batches, then fdatasync (every touched page written back) | %.2f M/s | %.1f s applying + %.1f s syncing | | |\n",
                Fmt("%.1f M", static_cast<double>(g.sustained_updates) / 1e6).c_str(), r.upd_sustained / 1e6,
                r.sustained_apply_s, r.sustained_sync_s);
  }
  if (r.have_verify)
    std::printf("| Verify after %" PRIu64 " updates | %" PRIu64 " mismatches in %" PRIu64 " nodes (%.1f s) | | 0 | %s |\n",
                r.updates_total, r.verify.mismatches, r.verify.nodes_checked, r.verify_seconds,
                Verdict(r.verify.mismatches == 0).c_str());
  std::printf("| answers checked (exact scans, tiers on vs off, after updates) | %s | | all right | %s |\n",
              g_correct ? "all right" : "SOME WRONG", Verdict(g_correct).c_str());

  if (on.n > 0 || off.n > 0) {
    std::printf("\nCold queries (array and tree pages dropped before each; the RAM tier is mapped):\n\n");
    std::printf("| tier | stats | ranges | n | p50 | p99 | mean | max | array bytes/query | tier bytes/query | requests/query |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const QueryRun* run : {&r.on, &r.on_ext, &r.off, &r.off_ext}) {
      if (run->samples.empty()) continue;
      for (int kind : {-1, 0, 1}) {
        const QueryRow q = Summarise(*run, kind);
        const bool on_tier = run == &r.on || run == &r.on_ext;
        const bool ext = run == &r.on_ext || run == &r.off_ext;
        std::printf("| %s | %s | %s | %zu | %s | %s | %s | %s | %s | %s | %.1f |\n", on_tier ? "disk tier on" : "off (paper)",
                    ext ? "min+max" : "sum+mean+var", kind < 0 ? "all" : kind == 0 ? "data at both ends" : "anywhere",
                    q.n, Ms(q.p50).c_str(), Ms(q.p99).c_str(), Ms(q.mean).c_str(), Ms(q.max).c_str(),
                    Bytes(q.array_bytes).c_str(), Bytes(q.tier_bytes).c_str(), q.requests);
      }
    }
    std::printf("\nFloor (fio on the same file system, O_DIRECT, io_uring): randread qd 1 p50 %s (4 KiB), %s (64 KiB); "
                "sequential read 1 MiB qd 32: %s.\n",
                g.fio_rand_p50_us > 0 ? Fmt("%.0f us", g.fio_rand_p50_us).c_str() : "n/a",
                g.fio_rand64k_p50_us > 0 ? Fmt("%.0f us", g.fio_rand64k_p50_us).c_str() : "n/a",
                fio > 0 ? Fmt("%.0f MB/s", fio / 1e6).c_str() : "n/a");
  }

  if (!r.scan_cpp.empty()) {
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

  std::printf("\nWhere the time goes:\n\n");
  if (r.have_breakdown && !r.builds_on.empty()) {
    BuildRun best = r.builds_on.front();
    for (const BuildRun& b : r.builds_on)
      if (b.wall < best.wall) best = b;
    const BuildBreakdown& b = r.breakdown;
    std::printf("- build: %.2f GB/s of data (BuildStats %.2f s of %.2f s wall). Its read pattern alone (16 MiB batches "
                "of 1 MiB, as buffers/tree_build.cc): %.2f GB/s; the same bytes 64 MiB per batch: %.2f GB/s, 256 MiB: %.2f GB/s. "
                "Summarising warm leaves: %.2f GB/s on 1 thread, %.2f GB/s on 2.\n",
                build_bs(best) / 1e9, best.seconds, best.wall, b.read_chunked_gbs, b.read_64_gbs, b.read_window_gbs, b.cpu1_gbs,
                b.cpu2_gbs);
  }
  if (r.leaf_off > 0)
    std::printf("- disk tier off: a query reads up to half a %s bin on each side (shorter side); allocating "
                "and zeroing a scratch of 2 leaves (%s), as buffers/range_query.cc does per query, takes %.0f ms alone.\n",
                Bytes(static_cast<double>(r.leaf_off * 8)).c_str(), Bytes(static_cast<double>(r.leaf_off * 16)).c_str(),
                r.off_scratch_ms);
  if (r.have_updates) {
    std::printf("- one update: %.2f us in batches of %" PRIu64 ", %.2f us one per Apply (which adds a stat() of "
                "%.2f us, the batch bracket and the refresh bookkeeping); the array side alone (ReadRaw and WriteRaw of "
                "one element) is timed in bench/moments_bench.cc.\n",
                1e6 / r.upd_burst, g.batch, 1e6 / r.upd_single, r.t_stat * 1e6);
    std::printf("- each random update dirties a 4 KiB page of the array: the burst left %.0f MiB dirty; the kernel "
                "starts writing back at %.0f MiB and throttles writers near %.0f MiB, after which updates run at "
                "the disk's write-back pace.\n",
                r.dirty_after_burst_mib, r.dirty_background_mib, r.dirty_threshold_mib);
    for (const auto& [name, rate] : r.upd_backend)
      std::printf("- burst updates with the array opened with --io %s: %.2f M/s\n", name.c_str(), rate / 1e6);
  }
  bool any_busy = false;
  for (const PhaseUse& u : g_usage) any_busy |= u.busy();
  std::printf("\nOther processes during each phase%s:\n\n", any_busy ? " (a busy phase's figures are disturbed)" : "");
  for (const PhaseUse& u : g_usage)
    std::printf("- %s (%.0f s): %s%s\n", u.phase.c_str(), u.seconds, u.Text().c_str(), u.busy() ? " **busy**" : "");
}

}  // namespace
}  // namespace momenta

int main(int argc, char** argv) {
  using namespace momenta;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ParseArgs(argc, argv);
  std::string dir = Env("MOMENTA_BENCH_DIR", ".");
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) Die(dir + ": " + std::strerror(errno));
  g.dir = real;
  std::free(real);
  g.keep = Env("MOMENTA_BENCH_KEEP", "0") == "1";
  try {
    g.seed = std::stoull(Env("MOMENTA_BENCH_SEED", "20240601"));
  } catch (const std::exception&) {
    Die("MOMENTA_BENCH_SEED must be a number");
  }
  {
    struct stat st;
    if (::stat(g.dir.c_str(), &st) == 0) g_device = {major(st.st_dev), minor(st.st_dev)};
  }
  g_array = g.dir + "/" + kArrayName;
  g_tree = SidecarPath(g_array) + "/tree";
  g_setup = g.dir + "/" + kSetupName;
  const std::string sig_paths[5] = {g_array, g_tree, g_tree + ".verify", g_setup, SidecarPath(g_array)};
  for (int k = 0; k < 5; ++k) {
    if (sig_paths[k].size() >= sizeof g_sig_paths[k]) Die("MOMENTA_BENCH_DIR path too long");
    std::strcpy(g_sig_paths[k], sig_paths[k].c_str());
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  std::printf("moments_driver: seed %" PRIu64 ", array 2^%d f8, %d regions x %" PRIu64
              " MiB, queries >= 2^%d elements: %d cold (disk tier on), %d (off), %d scans, %d exact checks; "
              "updates: %" PRIu64 " burst in batches of %" PRIu64 ", %" PRIu64 " single, %" PRIu64
              " sustained, %" PRIu64 " per other backend; %d timed builds; parts %s; keep %d; load average %s\n",
              g.seed, g.length_log2, g.regions, g.region_mib, g.min_len_log2, g.queries, g.off_queries, g.scans,
              g.checks, g.updates, g.batch, g.single_updates, g.sustained_updates, g.backend_updates, g.builds,
              g.parts.c_str(), g.keep ? 1 : 0, LoadAverage().c_str());
  std::printf("fio (given): seq read %.0f MB/s, randread 4k p50 %.0f us, 64k p50 %.0f us\n", g.fio_seq_mbs,
              g.fio_rand_p50_us, g.fio_rand64k_p50_us);

  Report rep;
  {
    Phase phase("setup");
    rep.setup = MakeSetup();
  }
  g_cleanup_on_signal = !g.keep;
  rep.data_on_disk = DataBytesOnDisk();
  const QuerySet qs = MakeRanges(rep.setup);
  rep.scan_ranges = qs.scan_ranges;

  // ---- build --------------------------------------------------------------
  {
    Phase phase("build");
    DropAll();
    std::vector<std::string> notices;
    const bool first = ::access(g_tree.c_str(), F_OK) != 0;
    const auto t0 = Clock::now();
    auto ba = OpenArray(false, IoKind::kAuto, &notices);  // builds when missing or stale
    const double open_s = Since(t0);
    for (const std::string& n : notices) std::printf("open: %s\n", n.c_str());
    if (first || !notices.empty()) {
      rep.first_open = open_s;
      std::printf("build: Open built the buffer in %.2f s (%.0f MB/s of data)\n", open_s,
                  static_cast<double>(rep.data_on_disk) / open_s / 1e6);
    }
    rep.tiers_on = TierText(*ba);
    std::printf("tiers: %s\n", rep.tiers_on.c_str());
    if (Want("build")) {
      for (int k = 0; k < std::max(1, g.builds); ++k) {
        rep.builds_on.push_back(TimedRebuild(*ba, TreeOptions{}));
        const BuildRun& b = rep.builds_on.back();
        std::printf("build: Rebuild (disk tier on) %.2f s wall, BuildStats %.2f s, %s read: %.0f MB/s\n", b.wall,
                    b.seconds, Bytes(static_cast<double>(b.bytes)).c_str(),
                    static_cast<double>(b.bytes) / b.wall / 1e6);
      }
      rep.breakdown = ProfileBuild(ba->tree().layout().leaf_span(), ba->tree().order());
      rep.have_breakdown = true;
      std::printf("build profile: read pattern alone %.2f GB/s (64 MiB batches %.2f GB/s, 256 MiB %.2f GB/s); "
                  "summarising %.2f GB/s (1 thread), %.2f GB/s (2)\n",
                  rep.breakdown.read_chunked_gbs, rep.breakdown.read_64_gbs, rep.breakdown.read_window_gbs, rep.breakdown.cpu1_gbs,
                  rep.breakdown.cpu2_gbs);
    }
  }

  // ---- cold queries, disk tier on ----------------------------------------------
  if (Want("queries")) {
    Phase phase("queries");
    auto ba = OpenArray(false);  // a fresh mapping: the disk tier is not mapped
    TouchRamTier(*ba);
    rep.on = RunQueries(*ba, qs.ranges, g.queries, false, "disk tier on, sum+mean+var");
    rep.on_ext = RunQueries(*ba, qs.ranges, g.queries, true, "disk tier on, min+max");
  }
  if (Want("scans")) {
    Phase phase("scans");
    auto ba = OpenArray(false);
    TouchRamTier(*ba);
    // momenta cold, then the C++ loop (also the exact reference), then NumPy.
    for (const Range& r : qs.scan_ranges) {
      rep.scan_momenta.push_back(ColdQuery(*ba, r, false));
      const Sample ext = ColdQuery(*ba, r, true);
      DropCache(g_array);
      const auto t0 = Clock::now();
      const Exact e = PreadScan(r.p, r.q);
      rep.scan_cpp.push_back(Since(t0));
      std::printf("scan [%" PRIu64 ", %" PRIu64 ") %s: momenta %s, C++ pread loop %.2f s (%.2f GB/s)\n", r.p, r.q,
                  Bytes(static_cast<double>((r.q - r.p) * 8)).c_str(), Ms(rep.scan_momenta.back().seconds).c_str(),
                  rep.scan_cpp.back(), static_cast<double>((r.q - r.p) * 8) / rep.scan_cpp.back() / 1e9);
      CheckAnswer("cold, scan range", r, rep.scan_momenta.back().answer, false, e);
      CheckAnswer("cold min/max, scan", r, ext.answer, true, e);
    }
    rep.scan_numpy = RunNumpy(qs.scan_ranges);
    for (size_t k = 0; k < rep.scan_numpy.size(); ++k) {
      const Range& r = qs.scan_ranges[k];
      const long double want = rep.scan_momenta[k].answer.sum;
      const long double rel = std::fabs(rep.scan_numpy[k].sum - want) / std::max(std::fabs(want), 1e-300L);
      std::printf("scan [%" PRIu64 ", %" PRIu64 ") NumPy memmap %.2f s (%.2f GB/s), its sum differs from momenta's by %.1e relative\n",
                  r.p, r.q, rep.scan_numpy[k].seconds,
                  static_cast<double>((r.q - r.p) * 8) / rep.scan_numpy[k].seconds / 1e9, static_cast<double>(rel));
    }
  }
  if (Want("queries") && g.checks > 0) {
    Phase phase("checks");
    std::printf("reading the data once (warm) for exact checks of a few cold queries...\n");
    WarmData(rep.setup);
    for (int k = 0; k < g.checks && k < static_cast<int>(rep.on.samples.size()); ++k) {
      const Range& r = qs.ranges[k];
      const Exact e = ExtentScan(r.p, r.q);
      CheckAnswer("cold, disk tier on", r, rep.on.samples[k].answer, false, e);
      CheckAnswer("cold min/max, tier on", r, rep.on_ext.samples[k].answer, true, e);
    }
  }

  // ---- disk tier off (the paper's all-in-RAM bins, buffers/REFERENCE.md §3.6) -------
  if (Want("off")) {
    Phase phase("off");
    {
      auto ba = OpenArray(false);
      TreeOptions off;
      off.disk_tier = false;
      rep.build_off = TimedRebuild(*ba, off);
      std::printf("build: Rebuild (disk tier off) %.2f s wall, %s read, %.0f MB/s of data\n", rep.build_off.wall,
                  Bytes(static_cast<double>(rep.build_off.bytes)).c_str(),
                  static_cast<double>(rep.data_on_disk) / rep.build_off.wall / 1e6);
    }
    auto ba = OpenArray(false);
    rep.tiers_off = TierText(*ba);
    rep.leaf_off = ba->tree().layout().leaf_span();
    {  // What a query's raw-piece scratch costs with bins this large (range_query.cc).
      const auto t0 = Clock::now();
      std::vector<double> scratch(2 * rep.leaf_off);
      volatile double sink = scratch[scratch.size() / 2];
      (void)sink;
      rep.off_scratch_ms = Since(t0) * 1e3;
    }
    std::printf("tiers: %s\n", rep.tiers_off.c_str());
    TouchRamTier(*ba);
    rep.off = RunQueries(*ba, qs.ranges, g.off_queries, false, "disk tier off, sum+mean+var");
    rep.off_ext = RunQueries(*ba, qs.ranges, g.off_queries, true, "disk tier off, min+max");
    if (!rep.on.samples.empty()) {
      CompareRuns(rep.on, rep.off, false);
      CompareRuns(rep.on_ext, rep.off_ext, true);
    }
    // Back to the default tree (timed: another sample of the build).
    rep.builds_on.push_back(TimedRebuild(*ba, TreeOptions{}));
    std::printf("build: Rebuild (disk tier on) %.2f s wall, %.0f MB/s\n", rep.builds_on.back().wall,
                static_cast<double>(rep.builds_on.back().bytes) / rep.builds_on.back().wall / 1e6);
  }

  // ---- warm updates --------------------------------------------------------------------
  if (Want("updates")) {
    std::mt19937_64 rng(g.seed + 2);
    auto ba = OpenArray(true);
    // Everything durable and clean before each timed part: a part starts with
    // no write-back of an earlier one pending.
    auto settle = [&](BufferedArray& a) {
      Must(a.array().Sync(), "sync the array");
      Must(a.tree().Flush(), "flush the tree");
    };
    rep.dirty_threshold_mib = static_cast<double>(VmstatPages("nr_dirty_threshold")) * 4096 / kMiB;
    rep.dirty_background_mib = static_cast<double>(VmstatPages("nr_dirty_background_threshold")) * 4096 / kMiB;
    {
      Phase phase("warm-up");
      WarmData(rep.setup);
      // Warm the tree's pages for the regions (untimed).
      const auto warm = MakeUpdates(rep.setup, rng, g.updates / 4);
      Must(ba->Apply(warm), "warm-up updates");
      rep.updates_total += warm.size();
      settle(*ba);
    }
    {
      Phase phase("updates");
      // One update's parts (ReadRaw, WriteRaw of one element) are timed in
      // bench/moments_bench.cc; here, the stat() a one-update Apply adds.
      {
        struct stat st;
        const auto t0 = Clock::now();
        for (int k = 0; k < 100000; ++k) ::stat(g_array.c_str(), &st);
        rep.t_stat = Since(t0) / 100000;
      }
      // Medians of rounds: this VM's CPUs are shared, and one round can be
      // slowed several times over by other processes.
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      // Scattered over all the data: nearly every update dirties a clean page.
      // Each round: the kernel's floor two ways on the same elements, then momenta.
      std::vector<double> floor_stores, floor_pwrites, scattered, scattered_single;
      for (int round = 0; round < g.update_rounds; ++round) {
        const auto burst = MakeUpdates(rep.setup, rng, g.updates);
        floor_stores.push_back(BareStores(*ba, burst));
        settle(*ba);
        floor_pwrites.push_back(BarePwrites(*ba, burst));
        settle(*ba);
        scattered.push_back(ApplyBatches(*ba, burst, g.batch));
        rep.dirty_after_burst_mib = static_cast<double>(MeminfoKiB("Dirty")) / 1024;
        rep.updates_total += burst.size();
        settle(*ba);
        const auto single = MakeUpdates(rep.setup, rng, g.single_updates);
        scattered_single.push_back(ApplyBatches(*ba, single, 1));
        rep.updates_total += single.size();
        settle(*ba);
        std::printf("updates: round %d scattered: floor %.2f M/s by bare stores, %.2f M/s by bare pwrites; momenta "
                    "%.2f M/s in batches of %" PRIu64 " (%.0f MiB dirty after them), %.2f M/s one per Apply\n",
                    round + 1, floor_stores.back() / 1e6, floor_pwrites.back() / 1e6, scattered.back() / 1e6, g.batch,
                    rep.dirty_after_burst_mib, scattered_single.back() / 1e6);
      }
      rep.upd_floor = median(floor_stores);
      rep.upd_floor_pwrite = median(floor_pwrites);
      rep.upd_burst = median(scattered);
      rep.upd_single = median(scattered_single);
      // A hot set: a resident working set whose pages are already dirty, as
      // for a writer that keeps updating the same regions.
      const auto windows = HotWindows(rep.setup, rng);
      const auto touch = TouchHotPages(windows);
      ApplyBatches(*ba, touch, g.batch);
      rep.hot_pages = touch.size();
      rep.updates_total += touch.size();
      std::vector<double> hot_rates, hot_single_rates, hot_cpu_rates;
      for (int round = 0; round < g.update_rounds; ++round) {
        const auto hot = MakeHotUpdates(windows, rng, g.updates);
        double per_cpu = 0;
        hot_rates.push_back(ApplyBatches(*ba, hot, g.batch, &per_cpu));
        hot_cpu_rates.push_back(per_cpu);
        const auto hot_single = MakeHotUpdates(windows, rng, g.single_updates);
        hot_single_rates.push_back(ApplyBatches(*ba, hot_single, 1));
        rep.updates_total += hot.size() + hot_single.size();
        std::printf("updates: round %d hot set of %s: %.2f M/s in batches of %" PRIu64 " (%.2f M per CPU second), "
                    "%.2f M/s one per Apply\n",
                    round + 1, Bytes(static_cast<double>(rep.hot_pages) * 4096).c_str(), hot_rates.back() / 1e6,
                    g.batch, hot_cpu_rates.back() / 1e6, hot_single_rates.back() / 1e6);
      }
      rep.upd_hot = median(hot_rates);
      rep.upd_hot_cpu = median(hot_cpu_rates);
      rep.upd_hot_single = median(hot_single_rates);
      settle(*ba);
    }
    {
      Phase phase("sustained");
      const auto many = MakeUpdates(rep.setup, rng, g.sustained_updates);
      const auto t0 = Clock::now();
      ApplyBatches(*ba, many, g.batch);
      rep.sustained_apply_s = Since(t0);
      const auto t1 = Clock::now();
      settle(*ba);
      rep.sustained_sync_s = Since(t1);
      rep.upd_sustained = static_cast<double>(many.size()) / Since(t0);
      rep.updates_total += many.size();
      std::printf("updates: %.2f M/s sustained (%zu updates: %.1f s applying, %.1f s fdatasync)\n",
                  rep.upd_sustained / 1e6, many.size(), rep.sustained_apply_s, rep.sustained_sync_s);
    }
    ba.reset();
    {
      Phase phase("backends");
      for (IoKind kind : {IoKind::kPread, IoKind::kMmap}) {
        auto other = OpenArray(true, kind);
        const auto u = MakeUpdates(rep.setup, rng, g.backend_updates);
        const double rate = ApplyBatches(*other, u, g.batch);
        rep.updates_total += u.size();
        rep.upd_backend[std::string(IoKindName(kind))] = rate;
        std::printf("updates: %.2f M/s in batches of %" PRIu64 " with --io %s\n", rate / 1e6, g.batch,
                    std::string(IoKindName(kind)).c_str());
        settle(*other);
      }
    }
    rep.have_updates = true;

    // ---- correctness after the updates -------------------------------------------------------
    Phase phase("verify");
    auto check = OpenArray(false);
    for (int k = 0; k < g.checks && k < static_cast<int>(qs.scan_ranges.size() + qs.ranges.size()); ++k) {
      const int scans = static_cast<int>(qs.scan_ranges.size());
      const Range& r = k < scans ? qs.scan_ranges[k] : qs.ranges[k - scans];
      const Sample m = ColdQuery(*check, r, false), x = ColdQuery(*check, r, true);
      const Exact e = ExtentScan(r.p, r.q);
      CheckAnswer("after updates", r, m.answer, false, e);
      CheckAnswer("after updates, min/max", r, x.answer, true, e);
    }
    const auto t0 = Clock::now();
    rep.verify = Must(check->Verify(), "verify");
    rep.verify_seconds = Since(t0);
    rep.have_verify = true;
    std::printf("verify: %" PRIu64 " nodes checked, %" PRIu64 " mismatches (%.1f s)\n", rep.verify.nodes_checked,
                rep.verify.mismatches, rep.verify_seconds);
    for (const std::string& e : rep.verify.examples) std::printf("verify:   %s\n", e.c_str());
  }

  std::printf("load average at the end: %s\n", LoadAverage().c_str());
  PrintTable(rep);

  if (!g.keep) {
    std::error_code ec;
    std::filesystem::remove(g_array, ec);
    std::filesystem::remove_all(SidecarPath(g_array), ec);
    std::filesystem::remove(g_setup, ec);
    std::printf("\nremoved the array and its buffer (MOMENTA_BENCH_KEEP=1 keeps them)\n");
  } else {
    std::printf("\nkept %s and its buffer (remove them when done)\n", kArrayName);
  }
  if (!g_correct || rep.verify.mismatches != 0) {
    std::printf("\nSOME ANSWERS WERE WRONG: these figures measure nothing until that is fixed.\n");
    return 3;
  }
  return 0;
}
