#include "buffers/ola/ola_refine.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace momenta {
namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t SaturatingMul(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// The values of P_k h_k at level `level`'s points [first, last] (level <= k):
// at level k, f at the point's cell; below, each non-node point interpolated
// from the next level's stencil nodes (a node point takes its node's value).
std::vector<long double> Interpolant(const OlaLayout& layout, const OlaStencil& stencil, int level, int k, uint64_t p,
                                     uint64_t q, uint64_t first, uint64_t last) {
  std::vector<long double> out(last - first + 1);
  if (level == k) {
    const uint64_t span = layout.span(k);
    for (uint64_t j = first; j <= last; ++j) {
      const uint64_t x = j * span;
      out[j - first] = x >= p && x < q ? 1.0L : 0.0L;
    }
    return out;
  }
  const uint64_t b = layout.bin(), m = layout.last_point(level + 1);
  const int N = layout.nodes();
  // The next level's points every stencil of [first, last] reaches.
  const uint64_t up_first = stencil.FirstNode(std::min(first / b, m - 1), m);
  const uint64_t up_last = std::min(m, stencil.FirstNode(std::min(last / b, m - 1), m) + N - 1);
  const std::vector<long double> up = Interpolant(layout, stencil, level + 1, k, p, q, up_first, up_last);
  for (uint64_t i = first; i <= last; ++i) {
    const uint64_t bin = i / b, r = i % b;
    if (r == 0) {
      out[i - first] = up[bin - up_first];
      continue;
    }
    const uint64_t s = stencil.FirstNode(bin, m);
    long double v = 0;
    if (const long double* row = stencil.InteriorRow(bin, r, m)) {
      for (int l = 0; l < N; ++l) v += row[l] * up[s + l - up_first];
    } else {
      const OlaWeights w = stencil.Of(bin, r, m);
      for (int l = 0; l < N; ++l) v += w.w[l] * up[s + l - up_first];
    }
    out[i - first] = v;
  }
  return out;
}

}  // namespace

uint64_t OlaResidualReach(const OlaLayout& layout, int level) {
  assert(level >= 1 && level <= layout.levels());
  uint64_t sum = 0;
  for (int l = 1; l <= level; ++l) sum = SaturatingAdd(sum, layout.span(l));
  return SaturatingMul(sum, static_cast<uint64_t>(layout.nodes() - 1));
}

std::vector<IndexRange> OlaResidualCells(const OlaLayout& layout, int level, uint64_t p, uint64_t q) {
  assert(p < q && q <= layout.length());
  const uint64_t R = OlaResidualReach(layout, level), n = layout.length();
  std::vector<IndexRange> runs;
  auto add = [&](uint64_t x) {  // [x − R, x + R) within [0, n)
    const uint64_t begin = x > R ? x - R : 0, end = std::min(n, SaturatingAdd(x, R));
    if (begin >= end) return;
    if (!runs.empty() && begin <= runs.back().end)
      runs.back().end = std::max(runs.back().end, end);
    else
      runs.push_back({begin, end});
  };
  if (p > 0) add(p);
  if (q < layout.padded_length()) add(q);
  return runs;
}

long double OlaResidualWeightBound(const OlaLayout& layout, int level) {
  const long double lambda =
      layout.bin() <= OlaStencil::kTableBins ? layout.lebesgue() : std::ldexp(1.0L, layout.nodes() - 1);
  return (1 + std::pow(lambda, static_cast<long double>(level))) / 2;
}

std::vector<long double> OlaResidualWeights(const OlaLayout& layout, const OlaStencil& stencil, int level, uint64_t p,
                                            uint64_t q, IndexRange cells) {
  assert(level >= 1 && level <= layout.levels() && cells.end <= layout.length());
  if (cells.begin >= cells.end) return {};
  std::vector<long double> w = Interpolant(layout, stencil, 0, level, p, q, cells.begin, cells.end - 1);
  for (uint64_t c = cells.begin; c < cells.end; ++c) {
    const long double f = c >= p && c < q ? 1.0L : 0.0L;
    w[c - cells.begin] = f - w[c - cells.begin];
  }
  return w;
}

}  // namespace momenta
