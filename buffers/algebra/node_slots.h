// Where each field of a stored node sits (the slot table is in
// range_summary.h), for the codec's own files: range_summary.cc and the
// run kernels (decode_run.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "buffers/algebra/range_summary.h"

namespace momenta {

// Slots of a node of order J.
struct NodeSlots {
  explicit NodeSlots(int order) : terms(static_cast<size_t>(order) + 1) {}
  size_t terms;
  size_t shift() const { return 2 * terms; }
  size_t s1() const { return 2 * terms + 1; }
  size_t s2() const { return 2 * terms + 3; }
  size_t min() const { return 2 * terms + 5; }
  size_t max() const { return 2 * terms + 6; }
  size_t exact() const { return 2 * terms + 7; }
  size_t drift() const { return 2 * terms + 9; }
  size_t nan() const { return 2 * terms + 10; }
  size_t pos_inf() const { return 2 * terms + 11; }
  size_t neg_inf() const { return 2 * terms + 12; }
  size_t sumsq() const { return 2 * terms + 13; }  // 3 slots
  size_t mask() const { return 2 * terms + 16; }
  size_t check() const { return 2 * terms + 17; }
};

inline uint64_t NodeU64(const double* node, size_t slot) {
  uint64_t v;
  std::memcpy(&v, node + slot, sizeof v);
  return v;
}

inline NonFiniteCounts NodeCounts(const double* node, const NodeSlots& at) {
  return {NodeU64(node, at.nan()), NodeU64(node, at.pos_inf()), NodeU64(node, at.neg_inf())};
}

// Cells of a run of `count` that are finite (damaged counts are clamped:
// Classify reports the damage, decoding must not fault on it).
inline uint64_t NodeFiniteCount(uint64_t count, const NonFiniteCounts& c) {
  const uint64_t off = c.total();
  return off <= count ? count - off : 0;
}

// The run kernels (decode_run.cc): DecodeRun for order J in long double, and
// compensated in doubles four nodes at a time where the CPU has AVX2 and FMA.
RangeSummary DecodeRunLongDouble(int order, const double* first, uint64_t count, uint64_t span, uint64_t last_span);
// False when the compensated kernel cannot run here (no AVX2/FMA, or a span
// past 2^53 cells, which a double does not count exactly).
bool DecodeRunCompensated(int order, const double* first, uint64_t count, uint64_t span, uint64_t last_span,
                          RangeSummary* out);
// Turns the compensated kernel on or off (tests compare the two); false when
// it cannot be turned on here.
bool SetCompensatedRunsForTesting(bool on);

}  // namespace momenta
