#include "bench/moments/update_workloads.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>

#include "storage/io/mapped_file.h"

namespace momenta::moments_driver {

std::vector<IndexedValue> MakeUpdates(const DriverContext& ctx, std::mt19937_64& rng, uint64_t n) {
  const std::vector<uint64_t>& starts = ctx.report.setup.starts;
  std::vector<IndexedValue> u(n);
  std::uniform_real_distribution<double> value(-4096, 4096);
  for (IndexedValue& x : u) {
    x.index = starts[rng() % starts.size()] + rng() % ctx.config.region_elems();
    x.value = Value::Float(value(rng));
  }
  return u;
}

std::vector<uint64_t> HotWindows(const DriverContext& ctx, std::mt19937_64& rng) {
  const uint64_t window = ctx.config.hot_window_mib * kMiB / 8;
  std::vector<uint64_t> w;
  for (uint64_t start : ctx.report.setup.starts)
    w.push_back(start + (rng() % (ctx.config.region_elems() - window + 1)) / 512 * 512);
  return w;
}

std::vector<IndexedValue> MakeHotUpdates(const DriverContext& ctx, const std::vector<uint64_t>& windows,
                                         std::mt19937_64& rng, uint64_t n) {
  const uint64_t window = ctx.config.hot_window_mib * kMiB / 8;
  std::vector<IndexedValue> u(n);
  std::uniform_real_distribution<double> value(-4096, 4096);
  for (IndexedValue& x : u) {
    x.index = windows[rng() % windows.size()] + rng() % window;
    x.value = Value::Float(value(rng));
  }
  return u;
}

std::vector<IndexedValue> TouchHotPages(const DriverContext& ctx, const std::vector<uint64_t>& windows) {
  const uint64_t window = ctx.config.hot_window_mib * kMiB / 8;
  std::vector<IndexedValue> u;
  for (uint64_t w : windows)
    for (uint64_t at = 0; at < window; at += 512)
      u.push_back({w + at, Value::Float(static_cast<double>(at)), kLogTimeNow});
  return u;
}

double BareStores(const DriverContext& ctx, BufferedArray& ba, const std::vector<IndexedValue>& u) {
  auto map = Must(MappedFile::Open(ctx.paths.array, /*writable=*/true), "map the array");
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

double BarePwrites(const DriverContext& ctx, BufferedArray& ba, const std::vector<IndexedValue>& u) {
  const std::string& array = ctx.paths.array;
  const int fd = ::open(array.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) Die(array + ": " + std::strerror(errno));
  std::vector<uint64_t> old(u.size());
  for (size_t k = 0; k < u.size(); ++k)
    if (::pread(fd, &old[k], 8, static_cast<off_t>(ba.array().ByteOffset(u[k].index))) != 8)
      Die(array + ": read failed");
  const auto t0 = Clock::now();
  for (size_t k = 0; k < u.size(); ++k)
    if (::pwrite(fd, &old[k], 8, static_cast<off_t>(ba.array().ByteOffset(u[k].index))) != 8)
      Die(array + ": write failed");
  const double rate = static_cast<double>(u.size()) / Since(t0);
  if (::fdatasync(fd) != 0) Die(array + ": fdatasync failed");
  ::close(fd);
  return rate;
}

double ApplyBatches(BufferedArray& ba, const std::vector<IndexedValue>& u, uint64_t batch, double* per_cpu_second) {
  const auto t0 = Clock::now();
  const double c0 = ThreadCpuSeconds();
  for (uint64_t at = 0; at < u.size(); at += batch) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(batch, u.size() - at));
    Must(ba.Apply(std::span<const IndexedValue>(u.data() + at, n)), "apply");
  }
  if (per_cpu_second) *per_cpu_second = static_cast<double>(u.size()) / (ThreadCpuSeconds() - c0);
  return static_cast<double>(u.size()) / Since(t0);
}

}  // namespace momenta::moments_driver
