// What the Ola buffer's levels leave out of a range's sum, cut at level k:
// the part of a progressive answer (ola_progressive.h) that the levels
// cannot give exactly, and what bounds it (OLA.md, "Progressive answers").
//
// With f = 1 on [p, q) and 0 elsewhere (the sum, t = 0), h_k = f sampled at
// level k's points and P_k their interpolant down to the cells through the
// levels' stencils (ola_buffer.h, AnswerAbove):
//
//     Σ_{[p,q)} a_c = A_k + Σ_c w_c a_c,     w_c = f(c) − (P_k h_k)(c)
//
// Where w vanishes: a level-ℓ point's stencil nodes lie within (N − 1)·b^(ℓ+1)
// of it, so (P_k h_k)(c) depends only on f over c ± R_k, R_k = (N − 1)·Σ_{ℓ=1..k} b^ℓ;
// the stencils reproduce polynomials of degree < N, so w_c = 0 unless f jumps
// inside that window: w is supported on [p − R_k, p + R_k) (when p > 0) and
// [q − R_k, q + R_k) (when q < n'), within the array's cells.
//
// How large w is: P_k's weights from cell c to the level-k points, ω_j, sum
// to 1 (each stencil reproduces constants) and Σ|ω_j| <= Λ^k (Λ: one level's
// Lebesgue constant). P_k h_k(c) = Σ_{j inside} ω_j, a partial sum of weights
// whose positive ones total at most (Λ^k + 1)/2 and negative ones at least
// −(Λ^k − 1)/2, so |w_c| <= (1 + Λ^k)/2. Λ is exact for b <= 4096 (every
// offset is tabulated, ola_stencil.h); for larger bins, where it is only
// sampled, 2^(N−1) is taken instead (Σ_l |L_l(u)| <= Σ_l C(N−1, l) on the
// stencil's span).
#pragma once

#include <cstdint>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/ola/ola_layout.h"
#include "buffers/ola/ola_stencil.h"

namespace momenta {

// R_k = (N − 1)·Σ_{ℓ=1..k} b^ℓ, saturating at UINT64_MAX. REQUIRES: 1 <= level <= L
uint64_t OlaResidualReach(const OlaLayout& layout, int level);
// The cells where w may be non-zero for [p, q) cut at `level`: ascending,
// disjoint, non-empty runs within [0, length()). REQUIRES: p < q <= length()
std::vector<IndexRange> OlaResidualCells(const OlaLayout& layout, int level, uint64_t p, uint64_t q);
// A bound on |w_c| for every cell: (1 + Λ^k)/2 (above).
long double OlaResidualWeightBound(const OlaLayout& layout, int level);
// w_c = f(c) − (P_k h_k)(c) for the cells of `cells`, in order, computed in
// long double level by level down from k (about N·(1 + 1/b + …) multiply-adds
// a cell). REQUIRES: p <= q <= length(), 1 <= level <= L, cells within [0, length())
std::vector<long double> OlaResidualWeights(const OlaLayout& layout, const OlaStencil& stencil, int level, uint64_t p,
                                            uint64_t q, IndexRange cells);

}  // namespace momenta
