#include "bench/moments/reference.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/moments/common.h"
#include "storage/io/extents.h"

namespace momenta::moments_driver {
namespace {

constexpr size_t kChunkElems = 8 * kMiB / 8;

int OpenForReading(const std::string& array) {
  const int fd = ::open(array.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die(array + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

void Exact::Add(const double* a, size_t count) {
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

long double Exact::var() const {
  const long double m = mean();
  return std::max<long double>(0, sq / n - m * m);
}

Exact PreadScan(const std::string& array, uint64_t p, uint64_t q) {
  const int fd = OpenForReading(array);
  static std::vector<double> buf(kChunkElems);  // allocated once: later scans time reads only
  Exact e;
  for (uint64_t at = p; at < q; at += kChunkElems) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkElems, q - at));
    size_t got = 0;
    while (got < n * 8) {
      const ssize_t r = ::pread(fd, reinterpret_cast<char*>(buf.data()) + got, n * 8 - got,
                                static_cast<off_t>(kNpyHeaderBytes + at * 8 + got));
      if (r <= 0) Die(array + ": short read");
      got += static_cast<size_t>(r);
    }
    e.Add(buf.data(), n);
  }
  ::close(fd);
  return e;
}

Exact ExtentScan(const std::string& array, uint64_t p, uint64_t q) {
  auto ext = Must(DataExtents(array, kNpyHeaderBytes + p * 8, kNpyHeaderBytes + q * 8), "data extents");
  const int fd = OpenForReading(array);
  static std::vector<double> buf(kChunkElems);  // allocated once
  Exact e;
  uint64_t covered = 0;
  for (const ByteRange& r : ext) {
    const uint64_t a = (r.begin - kNpyHeaderBytes) / 8, b = std::min(q, (r.end - kNpyHeaderBytes + 7) / 8);
    for (uint64_t at = std::max(a, p); at < b; at += kChunkElems) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkElems, b - at));
      if (::pread(fd, buf.data(), n * 8, static_cast<off_t>(kNpyHeaderBytes + at * 8)) != static_cast<ssize_t>(n * 8))
        Die(array + ": short read");
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

void WarmData(const std::string& array, const std::vector<uint64_t>& starts, uint64_t region_elems) {
  const int fd = OpenForReading(array);
  for (uint64_t start : starts) ::posix_fadvise(fd, kNpyHeaderBytes + start * 8, region_elems * 8, POSIX_FADV_WILLNEED);
  std::vector<char> buf(8 * kMiB);
  for (uint64_t start : starts)
    for (uint64_t at = 0; at < region_elems * 8; at += buf.size())
      if (::pread(fd, buf.data(), buf.size(), static_cast<off_t>(kNpyHeaderBytes + start * 8 + at)) < 0)
        Die(array + ": read failed");
  ::close(fd);
}

}  // namespace momenta::moments_driver
