#include "bench/moments/ranges.h"

#include <algorithm>
#include <random>
#include <utility>

namespace momenta::moments_driver {

QuerySet MakeRanges(const Config& g, const Setup& s) {
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

}  // namespace momenta::moments_driver
