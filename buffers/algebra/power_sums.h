// Power sums in closed form, binomial coefficients, and the least-squares
// polynomial fit built on them.
//
// A least-squares fit of degree D to the cells of a range [p, p + w) solves the
// normal equations A c = b with
//   A_{k,l} = Σ_{x=0}^{w-1} x^(k+l)              (depends on w only: closed form)
//   b_m     = Σ_{x=0}^{w-1} x^m · a_{p+x}        (the range's index moments about p)
// With w up to 2^40 and k + l up to 16 the raw power sums reach 2^680 and A is
// a Hilbert-like matrix, so everything here works in the scaled variable
// t = x / w ∈ [0, 1): Σ t^m is about w / (m + 1) whatever w is, and the solved
// coefficients are rescaled to the variable x = i − p at the very end.
//
// Pure functions, no state; long double throughout (64-bit mantissa or more).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace momenta {

// The largest exponent of a power sum needed: a fit of degree 8 uses t^16.
inline constexpr int kMaxPowerSumExponent = 16;
// The largest polynomial degree FitPolynomial accepts.
inline constexpr int kMaxFitDegree = kMaxPowerSumExponent / 2;

// kBinomial[n][k] = C(n, k) for 0 <= k <= n <= kMaxPowerSumExponent + 1 (0 for
// k > n). Every entry is an integer below 2^17, exact in any floating type.
inline constexpr int kBinomialRows = kMaxPowerSumExponent + 2;
inline constexpr auto kBinomial = [] {
  std::array<std::array<long double, kBinomialRows>, kBinomialRows> c{};
  for (int n = 0; n < kBinomialRows; ++n) {
    c[n][0] = 1;
    for (int k = 1; k <= n; ++k) c[n][k] = c[n - 1][k - 1] + c[n - 1][k];
  }
  return c;
}();

// Σ_{x=0}^{w-1} (x / w)^m, the power sum of the scaled variable (0^0 = 1).
// Faulhaber's formula with Bernoulli numbers for w > 32, whose terms after the
// first shrink like w^(1-j) and cannot cancel; a direct sum below that, where
// the formula's terms would cancel. Relative error a few ulps of long double.
// REQUIRES: w >= 1, 0 <= m <= kMaxPowerSumExponent
long double ScaledPowerSum(uint64_t w, int m);

// Least-squares coefficients c_0..c_D of the polynomial Σ c_m x^m in x = i − p
// fitted to the w cells of a range [p, p + w), given the range's index moments
// moments[m] = Σ x^m a_{p+x} for m = 0..D (D = coefficients.size() − 1).
// Solves the scaled normal equations by Cholesky in long double; their
// condition number is that of the Hilbert matrix of order D + 1 (about 5e5 for
// D = 4, 5e11 for D = 8), which bounds the relative error of the coefficients
// in t = x / w at that many ulps of the inputs.
// Returns false, leaving coefficients unspecified, if the system is singular in
// long double (only when w <= D, which callers reject first).
// REQUIRES: w >= 1, 1 <= coefficients.size() <= kMaxFitDegree + 1,
//           moments.size() >= coefficients.size()
[[nodiscard]] bool FitPolynomial(uint64_t w, std::span<const long double> moments, std::span<long double> coefficients);

}  // namespace momenta
