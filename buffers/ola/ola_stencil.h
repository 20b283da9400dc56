// Ola's weights: which nodes of the next level a point feeds, and with what
// weight (REFERENCE.md §4.2; OLA.md).
//
// Take one level with points 0..b·m (nodes every b-th point, node j at point
// j·b, j = 0..m) and N = 2M nodes per stencil. A non-node point i = k·b + r
// (0 < r < b) uses the N consecutive nodes
//     S(i) = {s, …, s + N − 1},  s = k − M + 1, clamped to [0, m − N + 1]
// and its weights are the Lagrange basis of those nodes at i/b:
//     W_{s+l, i} = L_l(u) = Π_{l' != l} (u − l') / (l − l'),  u = i/b − s,  l = 0..N−1.
// A node point i = j·b feeds only node j, with weight 1. Then for every
// polynomial P of degree <= N − 1,  P(i) = Σ_l W_{s+l,i} P((s+l)·b)  (the
// interpolant reproduces P), which is what makes B_j = Σ_i W_{j,i} a_i serve
// every index moment below N.
//
// Interior weights depend on r only; they are tabulated for b <= kTableBins
// and computed in O(N²) otherwise, as are the clamped (one-sided) ones.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace momenta {

inline constexpr int kOlaNodeLimit = 16;  // the largest N the stencil code handles (measurements)

struct OlaWeights {
  uint64_t first = 0;                          // s: the first node
  std::array<long double, kOlaNodeLimit> w{};  // w[l] = W_{s+l, i}, l < N
};

class OlaStencil {
 public:
  static constexpr uint64_t kTableBins = 4096;

  // REQUIRES: nodes even, 2 <= nodes <= kOlaNodeLimit; bin >= 2
  OlaStencil(int nodes, uint64_t bin);

  int nodes() const { return nodes_; }
  uint64_t bin() const { return bin_; }

  // The weights of non-node point i = k·b + r of a level whose last node is
  // m (the next level's last point).
  // REQUIRES: 0 < r < b, k < m, m + 1 >= N
  OlaWeights Of(uint64_t k, uint64_t r, uint64_t m) const;
  // The first node s of bin k's stencil (Of's `first`, the same for every r):
  // k − N/2 + 1 clamped to [0, m − N + 1].
  uint64_t FirstNode(uint64_t k, uint64_t m) const {
    const uint64_t M = static_cast<uint64_t>(nodes_ / 2);
    const uint64_t s = k + 1 >= M ? k + 1 - M : 0;
    return s < m + 1 - nodes_ ? s : m + 1 - nodes_;
  }
  // Of's weights without the copy, for the hot loops: the tabulated row of an
  // interior bin (FirstNode(k, m) == k − N/2 + 1, b <= kTableBins), else nullptr
  // (then call Of).
  const long double* InteriorRow(uint64_t k, uint64_t r, uint64_t m) const {
    if (interior_.empty() || FirstNode(k, m) + static_cast<uint64_t>(nodes_ / 2) != k + 1) return nullptr;
    return interior_.data() + (r - 1) * static_cast<uint64_t>(nodes_);
  }

  // Λ: the largest Σ_l |W_{s+l,i}| over every kind of stencil (interior and
  // the clamped ones near each end). Exact over every r for b <= kTableBins,
  // else over kTableBins evenly spaced offsets (a measurement, used to cap
  // the levels, not part of any proof).
  long double Lebesgue() const;

 private:
  // L_l(u) for l = 0..N−1 into w.
  void Basis(long double u, std::array<long double, kOlaNodeLimit>& w) const;

  const int nodes_;
  const uint64_t bin_;
  std::array<long double, kOlaNodeLimit> denominators_{};  // Π_{l' != l} (l − l')
  std::vector<long double> interior_;                      // (r − 1)·N + l: interior weights, b <= kTableBins
};

}  // namespace momenta
