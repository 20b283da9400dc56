// The shape of a hierarchical Ola buffer (overlapped bin buffering with
// Lagrange weights, buffers/ola/OLA.md and buffers/REFERENCE.md §4): how many nodes each
// stencil has, how many levels, how the array is padded, and where each
// level's values live.
//
// Levels. Level 0 is the array itself, padded with zeros to n' = m_L·b^L + 1
// cells (zeros change no moment; the padding is never stored or read). Level
// ℓ has points 0..m_ℓ with m_ℓ = (n' − 1)/b^ℓ; point i of level ℓ sits at
// cell i·b^ℓ. Level ℓ + 1 is the Ola transform of level ℓ (OlaStencil). The
// top level L keeps at least N points (m_L + 1 >= N), so every stencil has
// its N nodes.
//
// Storage, two layouts holding the same numbers for everything a query or an
// update reads (OLA.md measures that the answers are bit-identical):
//  - in place (the paper's): (n' − 1)/b + 1 slots. Slot s holds the value of
//    level ℓ at point s/b^(ℓ−1) for the LARGEST ℓ <= L with b^(ℓ−1) | s. A
//    query reads level ℓ < L only at non-node points (i mod b != 0) and level
//    L everywhere, which are exactly the values kept.
//  - explicit levels: every level 1..L stored whole, Σ_ℓ (m_ℓ + 1) slots
//    (about n/(b − 1)); kept for the measurement, not the default.
#pragma once

#include <cstdint>
#include <vector>

#include "buffers/tree/tree_options.h"  // kOlaMaxNodes
#include "storage/util/status.h"

namespace momenta {

enum class OlaStorage { kInPlace, kExplicitLevels };

struct OlaOptions {
  int nodes = 4;       // N: stencil nodes; index moments of orders 0..N−1 are served. Even, 2..kOlaMaxNodes
  uint64_t bin = 16;   // b: cells per bin (>= 2)
  int max_levels = 0;  // 0: as many as the shape and the growth limit allow
  OlaStorage storage = OlaStorage::kInPlace;
  long double max_growth = 0;  // 0: kOlaMaxGrowth (a larger one only to measure what it costs: OLA.md)
};

// The largest product of per-level Lebesgue constants (max over stencils of
// Σ_j |W_{j,i}|) the levels may compound to: the rounding of a stored value is
// amplified by at most this much (OLA.md measures the error against it).
inline constexpr long double kOlaMaxGrowth = 1e4L;

class OlaLayout {
 public:
  // The layout for an array of `length` cells (length >= 0; an empty array
  // gets the smallest shape). Levels: the most with m_L + 1 >= N, b^L <= the
  // array's (length − 1)/(N − 1) (so padding adds at most ~1/(N−1)), growth
  // Λ^L <= kOlaMaxGrowth (or options.max_growth), and at most options.max_levels when that is set;
  // at least 1. InvalidArgument naming the value when N is odd, below 2 or
  // above kOlaMaxNodes (the message names the order asked and the limit), or
  // b < 2, or the shape overflows 64 bits.
  static Result<OlaLayout> Make(const OlaOptions& options, uint64_t length);

  uint64_t length() const { return length_; }         // n: cells the user has
  uint64_t padded_length() const { return padded_; }  // n' = m_L·b^L + 1 >= n
  uint64_t bin() const { return bin_; }
  int nodes() const { return nodes_; }
  int max_order() const { return nodes_ - 1; }
  int levels() const { return levels_; }  // L >= 1
  OlaStorage storage() const { return storage_; }
  // Λ: max over stencils of Σ_j |W_{j,i}|, and Λ^L.
  long double lebesgue() const { return lebesgue_; }
  long double growth() const;

  // m_ℓ: the last point of level ℓ (0 <= level <= L).
  uint64_t last_point(int level) const { return last_point_[level]; }
  // b^ℓ (0 <= level <= L).
  uint64_t span(int level) const { return span_[level]; }
  // Slots the buffer holds.
  uint64_t slots() const { return slots_; }
  // Where level `level` (1..L) keeps point `point`. In place this is defined
  // only for the points that layout keeps (see above).
  // REQUIRES: 1 <= level <= L, point <= last_point(level)
  uint64_t SlotOf(int level, uint64_t point) const {
    if (storage_ == OlaStorage::kInPlace) return point * span_[level - 1];
    return level_base_[level] + point;
  }

 private:
  OlaLayout() = default;

  uint64_t length_ = 0;
  uint64_t padded_ = 0;
  uint64_t bin_ = 0;
  int nodes_ = 0;
  int levels_ = 0;
  OlaStorage storage_ = OlaStorage::kInPlace;
  long double lebesgue_ = 1;
  uint64_t slots_ = 0;
  std::vector<uint64_t> last_point_;  // [0, L]
  std::vector<uint64_t> span_;        // [0, L]: b^ℓ
  std::vector<uint64_t> level_base_;  // explicit levels: first slot of level ℓ (index 0 unused)
};

}  // namespace momenta
