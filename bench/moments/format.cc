#include "bench/moments/format.h"

#include <cstdio>

#include "bench/moments/common.h"

namespace momenta::moments_driver {

std::string Bytes(double b) {
  char buf[64];
  if (b >= 10.0 * kGiB)
    std::snprintf(buf, sizeof buf, "%.1f GiB", b / kGiB);
  else if (b >= 10.0 * kMiB)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / kMiB);
  else if (b >= 10.0 * kKiB)
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / kKiB);
  else
    std::snprintf(buf, sizeof buf, "%.0f B", b);
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

}  // namespace momenta::moments_driver
