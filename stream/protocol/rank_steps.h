// RankSteps: what a root knows of one site's ranks under either quantile
// protocol: a step function R(x) = the level of the largest boundary value
// <= x (0 below the first), and the site's count. AnswerQuantile combines
// sites with the interval rule (stream/REFERENCE.md §4.2, fixed for duplicates):
// for each boundary value x of any site, in order, the estimated ranks x
// occupies are [R(x-), R(x)], x- being the previous boundary value (R summed
// over sites); the answer is the x whose interval lies nearest to
// T = phi * (sum of counts), the first on ties.
//
// If every site's R is within D of its true rank function everywhere and
// the counts sum to within K of the true total, the answer's true rank range
// meets [phi c - (D + phi K) - 1, phi c + (D + phi K) + 1] (stream tests).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace momenta {

struct RankSteps {
  std::vector<int64_t> values;  // ascending, distinct
  std::vector<double> levels;   // non-decreasing, one per value
  double count = 0;

  // The step function at x.
  double At(int64_t x) const;
};

// nullopt when no site has a boundary or every count is 0. REQUIRES: 0 <= phi <= 1
std::optional<int64_t> AnswerQuantile(const std::vector<const RankSteps*>& sites, double phi);

}  // namespace momenta
