// Sequential and random reads through each I/O backend, cold cache.
//
//   MOMENTA_BENCH_DIR   folder for the data file (default: the current one)
//   MOMENTA_BENCH_GIB   data file size in GiB (default 4)
//   MOMENTA_BENCH_KEEP  1: keep the data file at exit (and reuse a kept one)
//   MOMENTA_BENCH_MIN_TIME  seconds each case runs at least (default 2)
//   MOMENTA_BENCH_HUGEPAGES 0: plain 4 KiB pages for the read buffers
//
// The data file (momenta_io_bench.dat) is fully written, not sparse: a hole
// reads as zeros without touching the disk. It is made before any timing,
// and the run refuses to start when the file system lacks its size + 1 GiB.
//
// Every iteration is one ReadBatch of `batch` block-aligned requests into
// page-aligned buffers (so io_uring reads them with O_DIRECT). io_uring keeps
// `qd` of them in flight; the pread and mmap backends read one request at a
// time, so they run at qd=1 only. Reads are cold: the file's page cache is
// dropped (posix_fadvise DONTNEED, with the backend closed so that mmap's
// pages are unmapped) before a measurement and, outside the timed region,
// again before a page-cache backend could read a block twice (every batch of
// random reads; each wrap of a sequential pass). O_DIRECT reads need no drop,
// so io_uring runs without pauses, like fio.
//
// Arguments: backend (0 pread, 1 mmap, 2 io_uring), block_kib, qd. The label
// is the backend's Name(). Counters: bytes/s and items/s (reads per second).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "storage/io/io_backend.h"
#include "storage/util/parse_number.h"

namespace momenta {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr const char* kFileName = "momenta_io_bench.dat";

const IoKind kBackends[] = {IoKind::kPread, IoKind::kMmap, IoKind::kUring};

struct Config {
  std::string path;
  uint64_t size = 0;
  bool keep = false;
};
Config g_config;
char g_path_for_signal[4096];  // unlinked by the signal handler

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "io_bench: %s\n", message.c_str());
  std::exit(1);
}

void OnInterrupt(int sig) {
  ::unlink(g_path_for_signal);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// True when `path` exists with `size` bytes all backed by disk blocks.
bool UsableKeptFile(const std::string& path, uint64_t size) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == size &&
         static_cast<uint64_t>(st.st_blocks) * 512 >= size;
}

// Writes the whole data file with pseudo-random bytes (not zeros, which some
// virtual disks store as nothing) and syncs it.
void CreateDataFile(const Config& c) {
  const std::string dir = c.path.substr(0, c.path.rfind('/'));
  struct statvfs vfs;
  if (::statvfs(dir.c_str(), &vfs) != 0) Die(dir + ": " + std::strerror(errno));
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (free_bytes < c.size + kGiB)
    Die(dir + " has " + std::to_string(free_bytes / kMiB) + " MiB free; a " + std::to_string(c.size / kMiB) +
        " MiB data file needs that plus 1 GiB. Set MOMENTA_BENCH_DIR or MOMENTA_BENCH_GIB.");

  const int fd = ::open(c.path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) Die(c.path + ": " + std::strerror(errno));
  ::close(fd);
  IoOptions options;
  options.kind = IoKind::kPread;
  options.writable = true;
  auto file = OpenIoBackend(c.path, options);
  if (!file.ok()) Die(file.status().ToString());
  std::vector<uint64_t> chunk(8 * kMiB / sizeof(uint64_t));
  std::mt19937_64 rng(42);
  std::fprintf(stderr, "io_bench: writing %s (%llu MiB)...\n", c.path.c_str(),
               static_cast<unsigned long long>(c.size / kMiB));
  for (uint64_t at = 0; at < c.size; at += chunk.size() * sizeof(uint64_t)) {
    for (uint64_t& word : chunk) word = rng();
    const size_t n = std::min<uint64_t>(chunk.size() * sizeof(uint64_t), c.size - at);
    Status s = (*file)->Write(at, std::span<const char>(reinterpret_cast<const char*>(chunk.data()), n));
    if (!s.ok()) {
      ::unlink(c.path.c_str());
      Die(s.ToString());
    }
  }
  if (Status s = (*file)->Sync(); !s.ok()) Die(s.ToString());
}

void DropCache() {
  const int fd = ::open(g_config.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

std::unique_ptr<IoBackend> OpenBackend(IoKind kind, unsigned qd) {
  IoOptions options;
  options.kind = kind;
  options.queue_depth = qd;
  options.direct = true;
  auto b = OpenIoBackend(g_config.path, options);
  if (!b.ok()) return nullptr;
  return std::move(b).value();
}

// Requests per ReadBatch: at least 8 windows of qd, so the end of a batch
// (where fewer than qd reads are in flight) is a small part of it, and at
// least 4 MiB; at most 1024. Each request has its own destination (the
// contract forbids overlapping ones), so this also bounds the memory the
// reads land in: fio reuses qd buffers, and on a virtual disk reads into a
// few MiB ran up to a fifth faster than into hundreds of MiB.
size_t BatchSize(size_t block, unsigned qd) {
  return std::min<size_t>(1024, std::max<size_t>(8 * size_t{qd}, 4 * kMiB / block));
}

// Destination buffers in transparent huge pages where the kernel allows
// (THP "madvise" mode), touched once so page faults on them are not timed.
// Huge pages matter for O_DIRECT: a 1 MiB read into 256 scattered 4 KiB pages
// needs more segments than a virtio disk takes in one request (254 here) and
// is split in two; physically contiguous memory goes as one request.
struct Buffers {
  static constexpr size_t kHuge = 2 * kMiB;
  explicit Buffers(size_t bytes)
      : size((bytes + kHuge - 1) / kHuge * kHuge), data(static_cast<char*>(std::aligned_alloc(kHuge, size))) {
    if (Env("MOMENTA_BENCH_HUGEPAGES", "1") != "0")
      ::madvise(data.get(), size, MADV_HUGEPAGE);  // advice: fine if refused
    std::memset(data.get(), 1, size);
  }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  size_t size;
  std::unique_ptr<char, Free> data;
};

enum class Pattern { kSequential, kRandom };

void RunReads(benchmark::State& state, Pattern pattern) {
  const IoKind kind = kBackends[state.range(0)];
  const size_t block = static_cast<size_t>(state.range(1)) * 1024;
  const unsigned qd = static_cast<unsigned>(state.range(2));
  const size_t batch = BatchSize(block, qd);
  const uint64_t blocks_in_file = g_config.size / block;
  if (blocks_in_file < batch) {
    state.SkipWithError("data file smaller than one batch; raise MOMENTA_BENCH_GIB");
    return;
  }

  Buffers buffers(batch * block);
  std::vector<ReadRequest> requests(batch);
  for (size_t i = 0; i < batch; ++i) requests[i] = {0, block, buffers.data.get() + i * block};
  std::mt19937_64 rng(7);
  uint64_t next_block = 0;  // sequential cursor

  DropCache();
  std::unique_ptr<IoBackend> backend = OpenBackend(kind, qd);
  if (backend == nullptr) {
    state.SkipWithError("backend failed to open (io_uring refused?)");
    return;
  }
  // O_DIRECT reads never touch the page cache; the others leave the pages
  // they read behind, so the cache is dropped again (untimed) before any of
  // them could be read twice: every batch for random reads, at each wrap
  // for sequential ones.
  const bool page_cache = backend->Name().find("O_DIRECT") == std::string::npos;
  const std::string name = backend->Name();
  bool cold = true;  // nothing read since the last drop
  for (auto _ : state) {
    const bool wraps = next_block + batch > blocks_in_file;
    if (page_cache && (pattern == Pattern::kRandom || wraps) && !cold) {
      state.PauseTiming();
      backend.reset();  // unmaps mmap's pages too, so DONTNEED can drop them
      DropCache();
      backend = OpenBackend(kind, qd);
      state.ResumeTiming();
      if (backend == nullptr) {
        state.SkipWithError("backend failed to reopen");
        break;
      }
    }
    if (wraps) next_block = 0;
    for (ReadRequest& r : requests)
      r.offset = (pattern == Pattern::kSequential ? next_block++ : rng() % blocks_in_file) * block;

    Status s = backend->ReadBatch(requests);
    cold = false;
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  const int64_t reads = static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(batch);
  state.SetItemsProcessed(reads);
  state.SetBytesProcessed(reads * static_cast<int64_t>(block));
  state.SetLabel(kind == IoKind::kUring ? name : name + ", one read at a time");
  state.counters["batch"] = static_cast<double>(batch);
}

void BM_SequentialRead(benchmark::State& state) { RunReads(state, Pattern::kSequential); }
void BM_RandomRead(benchmark::State& state) { RunReads(state, Pattern::kRandom); }

void Register() {
  double min_time = 0;
  if (!ParseReal(Env("MOMENTA_BENCH_MIN_TIME", "2"), &min_time) || !(min_time > 0))
    Die("MOMENTA_BENCH_MIN_TIME must be a positive number of seconds");
  struct Case {
    const char* name;
    void (*fn)(benchmark::State&);
    std::vector<int64_t> block_kib;
  };
  const Case cases[] = {{"BM_SequentialRead", BM_SequentialRead, {128, 1024}},
                        {"BM_RandomRead", BM_RandomRead, {4, 1024}}};
  for (const auto& [name, fn, blocks] : cases) {
    auto* b = benchmark::RegisterBenchmark(name, fn);
    b->ArgNames({"backend", "block_kib", "qd"})->UseRealTime()->MinTime(min_time);
    b->Unit(benchmark::kMillisecond);
    for (int64_t backend = 0; backend < 3; ++backend)
      for (int64_t block : blocks)
        for (int64_t qd : {1, 32})
          if (qd == 1 || kBackends[backend] == IoKind::kUring) b->Args({backend, block, qd});
  }
}

}  // namespace
}  // namespace momenta

int main(int argc, char** argv) {
  using namespace momenta;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  std::string dir = Env("MOMENTA_BENCH_DIR", ".");
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) Die(dir + ": " + std::strerror(errno));
  dir = real;
  std::free(real);
  double gib = 0;
  if (!ParseReal(Env("MOMENTA_BENCH_GIB", "4"), &gib) || !(gib > 0))
    Die("MOMENTA_BENCH_GIB must be a positive number of GiB");
  g_config.path = dir + "/" + kFileName;
  g_config.size = static_cast<uint64_t>(gib * static_cast<double>(kGiB)) / kMiB * kMiB;
  g_config.keep = Env("MOMENTA_BENCH_KEEP", "0") == "1";
  if (g_config.path.size() >= sizeof g_path_for_signal) Die("MOMENTA_BENCH_DIR path too long");
  std::strcpy(g_path_for_signal, g_config.path.c_str());

  if (g_config.keep && UsableKeptFile(g_config.path, g_config.size)) {
    std::fprintf(stderr, "io_bench: reusing kept %s\n", g_config.path.c_str());
  } else {
    if (!g_config.keep) {
      std::signal(SIGINT, OnInterrupt);
      std::signal(SIGTERM, OnInterrupt);
    }
    CreateDataFile(g_config);
  }

  Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!g_config.keep) ::unlink(g_config.path.c_str());
  return 0;
}
