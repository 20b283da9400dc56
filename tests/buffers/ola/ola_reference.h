// The reference an Ola test checks against: range moments in long double by a
// plain loop, and the bound OlaBuffer promises (buffers/ola/ola_buffer.h):
//   |M_t − exact| <= 1e-9 · Σ_{i∈[p−R, q+R)} min(|i − p| + R, q − p)^t |a_i|,  R = N·b^L.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "buffers/ola/ola_buffer.h"

namespace momenta::testing {

// Σ_{i∈[p,q)} (i − p)^t a_i, t = 0..nodes−1.
inline std::vector<long double> ReferenceMoments(const std::vector<long double>& a, uint64_t p, uint64_t q, int nodes) {
  std::vector<long double> m(nodes, 0.0L);
  for (uint64_t i = p; i < q; ++i) {
    long double power = 1, d = static_cast<long double>(i - p);
    for (int t = 0; t < nodes; ++t, power *= d) m[t] += power * a[i];
  }
  return m;
}

// The bound's magnitude (without the 1e-9): `mag` holds |a_i| at the largest
// each cell has held.
inline std::vector<long double> BoundMagnitudes(const std::vector<long double>& mag, const OlaLayout& layout,
                                                uint64_t p, uint64_t q) {
  const int nodes = layout.nodes();
  const uint64_t R = static_cast<uint64_t>(nodes) * layout.span(layout.levels());
  std::vector<long double> m(nodes, 0.0L);
  const uint64_t lo = p > R ? p - R : 0, hi = std::min<uint64_t>(mag.size(), q + R);
  for (uint64_t i = lo; i < hi; ++i) {
    const uint64_t dist = i >= p ? i - p : p - i;
    const long double w = static_cast<long double>(std::min(dist + R, q - p));
    long double power = 1;
    for (int t = 0; t < nodes; ++t, power *= w) m[t] += power * mag[i];
  }
  return m;
}

// The buffer's answer for [p, q), reading cells from `a`.
inline IndexMoments OlaAnswer(const OlaBuffer& ola, const std::vector<double>& a, uint64_t p, uint64_t q) {
  const auto runs = ola.CellsFor(p, q);
  std::vector<std::span<const double>> cells;
  for (const IndexRange& r : runs) cells.emplace_back(a.data() + r.begin, r.size());
  return ola.Answer(p, q, cells);
}

}  // namespace momenta::testing
