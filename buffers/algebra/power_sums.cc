#include "buffers/algebra/power_sums.h"

#include <cassert>
#include <cmath>

namespace momenta {

namespace {

// Bernoulli numbers B_0..B_16 with the B_1 = −1/2 convention, which makes
// Faulhaber's formula sum x^m over x = 0..w−1.
constexpr std::array<long double, kMaxPowerSumExponent + 1> kBernoulli = {1.0L,
                                                                          -1.0L / 2.0L,
                                                                          1.0L / 6.0L,
                                                                          0.0L,
                                                                          -1.0L / 30.0L,
                                                                          0.0L,
                                                                          1.0L / 42.0L,
                                                                          0.0L,
                                                                          -1.0L / 30.0L,
                                                                          0.0L,
                                                                          5.0L / 66.0L,
                                                                          0.0L,
                                                                          -691.0L / 2730.0L,
                                                                          0.0L,
                                                                          7.0L / 6.0L,
                                                                          0.0L,
                                                                          -3617.0L / 510.0L};

// Below this w the direct sum is cheap and Faulhaber's terms start to cancel.
constexpr uint64_t kDirectSumMaxW = 32;

}  // namespace

long double ScaledPowerSum(uint64_t w, int m) {
  assert(w >= 1 && 0 <= m && m <= kMaxPowerSumExponent);
  const long double wl = static_cast<long double>(w);
  if (w <= kDirectSumMaxW) {
    long double sum = 0;
    for (uint64_t x = 0; x < w; ++x) {
      const long double t = static_cast<long double>(x) / wl;
      long double power = 1;
      for (int k = 0; k < m; ++k) power *= t;
      sum += power;
    }
    return sum;
  }
  // Σ_{x<w} x^m = 1/(m+1) Σ_{j=0}^{m} C(m+1, j) B_j w^(m+1−j); divided by w^m
  // the j-th term is C(m+1, j) B_j w^(1−j). Sum the small terms first.
  std::array<long double, kMaxPowerSumExponent + 1> inv_power;  // [j] = w^(1−j)
  inv_power[1] = 1;
  for (int j = 2; j <= m; ++j) inv_power[j] = inv_power[j - 1] / wl;
  long double tail = 0;
  for (int j = m; j >= 1; --j) tail += kBinomial[m + 1][j] * kBernoulli[j] * inv_power[j];
  return (wl + tail) / static_cast<long double>(m + 1);
}

bool FitPolynomial(uint64_t w, std::span<const long double> moments, std::span<long double> coefficients) {
  const int terms = static_cast<int>(coefficients.size());
  assert(w >= 1 && terms >= 1 && terms <= kMaxFitDegree + 1);
  assert(moments.size() >= coefficients.size());
  if (w < static_cast<uint64_t>(terms)) return false;  // fewer cells than unknowns

  // Scaled system A' c' = b' in t = x / w: A'_{kl} = Σ t^(k+l), b'_m = M_m / w^m.
  constexpr int kN = kMaxFitDegree + 1;
  long double a[kN][kN];
  long double b[kN];
  long double scaled_power_sum[2 * kN - 1];
  for (int e = 0; e <= 2 * (terms - 1); ++e) scaled_power_sum[e] = ScaledPowerSum(w, e);
  const long double wl = static_cast<long double>(w);
  long double w_power = 1;  // w^m
  for (int k = 0; k < terms; ++k) {
    for (int l = 0; l < terms; ++l) a[k][l] = scaled_power_sum[k + l];
    b[k] = moments[k] / w_power;
    w_power *= wl;
  }

  // Cholesky A' = L Lᵀ, stored in the lower triangle of a.
  for (int j = 0; j < terms; ++j) {
    long double diag = a[j][j];
    for (int k = 0; k < j; ++k) diag -= a[j][k] * a[j][k];
    if (!(diag > 0)) return false;
    a[j][j] = std::sqrt(diag);
    for (int i = j + 1; i < terms; ++i) {
      long double v = a[i][j];
      for (int k = 0; k < j; ++k) v -= a[i][k] * a[j][k];
      a[i][j] = v / a[j][j];
    }
  }
  // L y = b', then Lᵀ c' = y (in place in b).
  for (int i = 0; i < terms; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= a[i][k] * b[k];
    b[i] /= a[i][i];
  }
  for (int i = terms - 1; i >= 0; --i) {
    for (int k = i + 1; k < terms; ++k) b[i] -= a[k][i] * b[k];
    b[i] /= a[i][i];
  }
  // Back to x: Σ c'_m t^m = Σ (c'_m / w^m) x^m.
  w_power = 1;
  for (int m = 0; m < terms; ++m) {
    coefficients[m] = b[m] / w_power;
    w_power *= wl;
  }
  return true;
}

}  // namespace momenta
