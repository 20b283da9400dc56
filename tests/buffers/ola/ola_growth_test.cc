// How Ola's rounding grows with the number of levels L and the stencil size
// N, in place and with explicit levels (the measurement behind
// buffers/ola/OLA.md's table). Each row: arrays of (N − 1)·b^Lmax + 1 cells of
// uniform [−1, 1] values (signs cancel), ranges with an end near either end
// of the array (where the one-sided stencils are) and random ones; the worst
// error of M_t over every order, divided by
//   stated: the bound's magnitude (ola_buffer.h; must stay below 1e-9), and
//   tight:  Σ_{i∈[p,q)} |i − p|^t |a_i| (the default buffer's scale; not promised).
// Asserts: in place and explicit levels agree to the bit, and every layout
// OlaLayout allows (Λ^L <= kOlaMaxGrowth) holds the bound. MOMENTA_OLA_TABLE=1
// prints every L up to Lmax with more ranges (slow: ~1 min).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "buffers/ola/ola_buffer.h"
#include "tests/assert_ok.h"
#include "tests/buffers/ola/ola_reference.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::BoundMagnitudes;
using testing::OlaAnswer;
using testing::ReferenceMoments;

struct Row {
  long double stated = 0, tight = 0;
  bool equal = true;
};

Row Measure(int nodes, uint64_t bin, int levels, const std::vector<double>& a, int ranges, std::mt19937_64& rng) {
  OlaOptions options;
  options.nodes = nodes;
  options.bin = bin;
  options.max_levels = levels;
  options.max_growth = 1e300L;  // past the cap: this is what the cap is measured on
  OlaOptions explicit_options = options;
  explicit_options.storage = OlaStorage::kExplicitLevels;
  auto x = OlaBuffer::Build(options, a);
  auto y = OlaBuffer::Build(explicit_options, a);
  EXPECT_OK(x);
  EXPECT_OK(y);
  Row row;
  if (!x.ok() || !y.ok()) return row;
  EXPECT_EQ(x->layout().levels(), levels);
  const uint64_t n = a.size();
  const std::vector<long double> exact(a.begin(), a.end());
  std::vector<long double> mag(n);
  for (uint64_t i = 0; i < n; ++i) mag[i] = std::fabs(exact[i]);
  const uint64_t edge = std::min<uint64_t>(n, static_cast<uint64_t>(nodes) * x->layout().span(levels));
  std::uniform_int_distribution<uint64_t> any(0, n), near(0, edge);
  for (int k = 0; k < ranges; ++k) {
    uint64_t p = any(rng), q = any(rng);
    if (k % 3 == 0) p = near(rng);
    if (k % 3 == 1) q = n - near(rng);
    if (p > q) std::swap(p, q);
    if (q - p < 2) continue;
    const IndexMoments gx = OlaAnswer(*x, a, p, q), gy = OlaAnswer(*y, a, p, q);
    const auto want = ReferenceMoments(exact, p, q, nodes);
    const auto stated = BoundMagnitudes(mag, x->layout(), p, q);
    std::vector<long double> tight(nodes, 0.0L);
    for (uint64_t i = p; i < q; ++i) {
      long double w = 1;
      for (int t = 0; t < nodes; ++t, w *= static_cast<long double>(i - p)) tight[t] += w * mag[i];
    }
    for (int t = 0; t < nodes; ++t) {
      row.equal = row.equal && gx.moment(t) == gy.moment(t);
      const long double err = std::fabs(gx.moment(t) - want[t]);
      row.stated = std::max(row.stated, err / stated[t]);
      row.tight = std::max(row.tight, err / tight[t]);
    }
  }
  return row;
}

TEST(OlaGrowthTest, ErrorAgainstLevelsInPlaceAndExplicit) {
  const bool table = std::getenv("MOMENTA_OLA_TABLE") != nullptr;
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED reproduces)");
  std::printf("OlaGrowthTest seed %llu\n", static_cast<unsigned long long>(seed));
  std::printf("%4s %3s %4s %3s %10s %12s %12s %s\n", "data", "N", "b", "L", "Λ^L", "err/stated", "err/tight",
              "in place == explicit");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  struct Config {
    int nodes;
    uint64_t bin;
    int max_levels;
  };
  const std::vector<Config> configs =
      table ? std::vector<Config>{{2, 2, 14}, {4, 2, 14}, {4, 4, 7}, {6, 2, 13}, {8, 2, 13}, {8, 4, 6}, {8, 16, 3}}
            : std::vector<Config>{{4, 2, 12}, {8, 2, 11}};
  for (const Config& c : configs) {
    const uint64_t n = static_cast<uint64_t>(c.nodes - 1) * static_cast<uint64_t>(std::pow(c.bin, c.max_levels)) + 1;
    for (int kind = 0; kind < (table ? 3 : 1); ++kind) {
      // 0: uniform [−1, 1]; 1: alternating ±1 with noise (the one-sided weights
      // alternate in sign); 2: positive, with 1e6 spikes at both ends.
      std::vector<double> a(n);
      for (uint64_t i = 0; i < n; ++i)
        a[i] = kind == 0 ? unit(rng) : kind == 1 ? (i % 2 ? 1 : -1) * (1 + 0.1 * unit(rng)) : 1.5 + unit(rng);
      if (kind == 2) a[0] = a[1] = a[n - 1] = a[n - 2] = 1e6;
      auto capped = OlaLayout::Make(OlaOptions{c.nodes, c.bin, 0, OlaStorage::kInPlace}, n);
      ASSERT_OK(capped);
      for (int L = 1; L <= c.max_levels; ++L) {
        if (!table && L != 1 && L != capped->levels() && L != c.max_levels) continue;
        const Row row = Measure(c.nodes, c.bin, L, a, table ? 150 : 40, rng);
        const long double growth = std::pow(capped->lebesgue(), static_cast<long double>(L));
        std::printf("%4d %3d %4llu %3d %10.3Le %12.3Le %12.3Le %s%s\n", kind, c.nodes,
                    static_cast<unsigned long long>(c.bin), L, growth, row.stated, row.tight, row.equal ? "yes" : "NO",
                    L == capped->levels() ? "  <- levels OlaLayout picks" : "");
        EXPECT_TRUE(row.equal) << "N " << c.nodes << " b " << c.bin << " L " << L;
        if (L <= capped->levels()) {
          EXPECT_LE(row.stated, kReferenceRelativeError) << "N " << c.nodes << " L " << L;
        }
      }
    }
  }
}

}  // namespace
}  // namespace momenta
