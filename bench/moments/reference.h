// Plain reads of the array file, without momenta: the exact reference
// answers (summed with an error far below the 1e-9 the checks allow), and
// the warm-up read that leaves the data cached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace momenta::moments_driver {

// Running exact moments and extremes of the elements added so far.
struct Exact {
  uint64_t n = 0;
  long double sum = 0, abs = 0, sq = 0;  // Σa, Σ|a|, Σa²
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  // Adds a[0, count): lane sums in double over one chunk (<= 1M elements, an
  // error far below 1e-9 of Σ|a|), chunks added in long double.
  void Add(const double* a, size_t count);
  long double mean() const { return sum / n; }
  long double var() const;  // REQUIRES: n > 0
};

// The plain C++ scan of elements [p, q) of the f8 array at `array`: pread in
// 8 MiB chunks, summing. Cold when the caller dropped the cache. Dies on a
// short read.
Exact PreadScan(const std::string& array, uint64_t p, uint64_t q);

// The same answer reading only the data extents inside [p, q) (holes are
// zeros): for checking long ranges whose plain scan would take minutes.
Exact ExtentScan(const std::string& array, uint64_t p, uint64_t q);

// Reads the regions [start, start + region_elems) of the array once,
// sequentially, as any reader leaves the data: afterwards their pages are
// cached (warm). Dies on a failed read.
void WarmData(const std::string& array, const std::vector<uint64_t>& starts, uint64_t region_elems);

}  // namespace momenta::moments_driver
