// RangeSummary: everything the moment buffer knows about one run of cells —
// its index moments, value moments, extremes and, for integer dtypes, its
// exact integer sum and sum of squares — and the fixed binary form a tree
// node stores it in.
//
// A node of order J is NodeCodec(J).doubles() = 2J + 20 doubles (8-byte slots;
// 192 bytes at the default J = 2), format version 4 (versions 2 and 3 had no
// exact sum of squares: 2J + 17 slots, mask and check at 2J+15 and 2J+16):
//
//   slot                        what
//   [0, J]                      index moments M_0..M_J about the run's start (double part),
//                               over the finite cells (a NaN or infinite cell counts as 0)
//   [J+1, 2J+1]                 their residues (M_j = value + residue exactly in long double)
//   2J+2                        value shift K
//   2J+3, 2J+4                  S1 = Σ(a−K) over the finite cells: double part, residue
//   2J+5, 2J+6                  S2 = Σ(a−K)² over the finite cells: double part, residue
//   2J+7, 2J+8                  min, max over the non-NaN cells (infinities included)
//   2J+9, 2J+10                 exact integer sum, an __int128 (0 for float dtypes)
//   2J+11                       drift: a bound on the rounding error S2 has gathered
//                               from incremental updates since it was last computed
//                               from data (0 after a build or refresh)
//   2J+12, 2J+13, 2J+14         counts of NaN, +inf and −inf cells (u64)
//   2J+15, 2J+16, 2J+17         exact integer sum of squares Σa², a 192-bit integer
//                               (buffers/algebra/exact_squares.h; 0 for float dtypes)
//   2J+18                       children mask (u64): bit c set when child c (level − 1,
//                               node fan-out·j + c) has been written (its check is not 0);
//                               0 in leaves
//   2J+19                       check (u64): 2^32 | CRC32C of the node's place
//                               (see NodeCodec) and slots [0, 2J+19), never 0 for a written
//                               node; 0 only in a never-written (all-zero) node
//
// The run's count is not stored: the tree layout knows every node's span; the
// finite count is that minus the three non-finite counts. An all-zero node is
// exactly the summary of a run of zeros, so a sparse tree file describes a
// sparse array without being written; a written node is never all zero (its
// check), and its parent's mask says it was written, so a node zeroed by
// damage is told from a hole (NodeCodec::Classify, MomentTree::CheckNode).
//
// Residues keep every stored sum as exact as the long double it came from.
// Incremental updates still round at the magnitude of the sums at the time
// (2^-64 each): when the data's spread shrinks by many orders (zeros replaced
// by 1e6 ± 1), that old rounding can exceed the accuracy the variance needs.
// The drift slot tracks it; ApplyUpdate reports when a node should be
// recomputed from its data (kDriftLimit of its central sum of squares).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "buffers/algebra/exact_squares.h"
#include "buffers/algebra/moments.h"
#include "storage/npy/dtype.h"

namespace momenta {

// How many cells of a run are NaN, +inf, −inf (always 0 for integer dtypes).
struct NonFiniteCounts {
  uint64_t nan = 0;
  uint64_t pos_inf = 0;
  uint64_t neg_inf = 0;
  uint64_t total() const { return nan + pos_inf + neg_inf; }
  bool operator==(const NonFiniteCounts&) const = default;
};

struct RangeSummary {
  IndexMoments index;   // count = every cell; moments over the finite cells (others count as 0)
  ValueMoments values;  // over the finite cells only: values.count() = count() − nonfinite.total()
  Extremes extremes;    // over the non-NaN cells (infinities included)
  NonFiniteCounts nonfinite;
  Int128 exact_sum = 0;  // Σ a_i for integer dtypes, else 0
  Int192 exact_sumsq;    // Σ a_i² for integer dtypes, else 0

  explicit RangeSummary(int order = 0) : index(order) {}
  uint64_t count() const { return index.count(); }

  // The summary of `count` elements of dtype `t` stored at `bytes`
  // (little-endian). `scratch` must hold `count` doubles (8-byte-aligned f8
  // cells are summarized in place and leave it untouched unless the run has a
  // NaN or an infinity). Integer dtypes and float runs without NaN or
  // infinity cost one pass; a float run that has some is summarized again
  // with those cells set aside. Without `extremes` the result's extremes are
  // left empty (a query that does not need min/max skips that pass).
  static RangeSummary OfElements(int order, DType t, const char* bytes, size_t count, double* scratch,
                                 bool extremes = true);
};

// `left` followed by `right` (index moments shift by left.count()).
RangeSummary Merge(const RangeSummary& left, const RangeSummary& right);
// Inverses of Merge for the invertible parts (index moments by the
// IndexMoments UnmergeRight/UnmergeLeft, value moments by Unmerge, moments.h;
// non-finite counts, exact sums and sums of squares subtract); extremes are NOT recovered
// (the result's extremes are empty: callers that need min/max read the side).
RangeSummary UnmergeRight(const RangeSummary& total, const RangeSummary& left);
RangeSummary UnmergeLeft(const RangeSummary& total, const RangeSummary& right);

// Relative drift (of a node's central sum of squares) past which an update
// asks for the node to be recomputed from data.
inline constexpr long double kDriftLimit = 1e-12L;

// The largest fan-out a node's children mask can describe.
inline constexpr uint32_t kMaxFanout = 64;

// The stored form of a node of a given order.
//
// Node checks bind the node's place: the check is
// 2^32 | CRC32C(slot as u64 LE, then slots [0, 2J+19)), where `slot` is the
// node's index in the file's node array (TreeLayout::node_base(level) + j),
// so a whole node written or copied to another place fails its check there.
// With bind_slot false (a summary outside any file: python/src/summary_binding.h)
// the check is CRC32C of the slots alone (the `slot` arguments are then ignored).
struct NodeDelta;  // node_delta.h

class NodeCodec {
 public:
  explicit NodeCodec(int order, bool bind_slot = true) : order_(order), bind_slot_(bind_slot) {}
  int order() const { return order_; }
  bool binds_slot() const { return bind_slot_; }
  size_t doubles() const { return 2 * static_cast<size_t>(order_) + 20; }
  size_t bytes() const { return doubles() * sizeof(double); }

  // Writes the whole node for place `slot`, `children_mask` and a fresh check included.
  void Encode(const RangeSummary& s, uint64_t slot, double* node, uint64_t children_mask = 0) const;
  // The summary a node stores (its check is not looked at: see Classify).
  RangeSummary Decode(const double* node, uint64_t count) const;

  // The summary of `count` sibling nodes stored one after another from
  // `first` (node k at first + k·doubles()), node k covering cells
  // [k·span, (k + 1)·span) of the run except the last, which covers
  // `last_span` (a level's last node may be short): what merging their
  // Decodes left to right gives, in two passes over the nodes and no merge
  // (a query's runs of whole nodes: range_query.cc). Checks are not looked
  // at (see Classify). REQUIRES: count >= 1, 1 <= last_span <= span
  RangeSummary DecodeRun(const double* first, uint64_t count, uint64_t span, uint64_t last_span) const;

  // What a node's bytes at place `slot` are: a never-written node (all zero,
  // check 0), a written node whose check matches, or damage.
  enum class NodeState { kHole, kWritten, kDamaged };
  NodeState Classify(uint64_t slot, const double* node) const;
  // Recomputes the check of a node changed in place (ApplyUpdate, SetChild).
  void Seal(uint64_t slot, double* node) const;
  uint64_t Check(const double* node) const;  // the stored check (0: never written)
  uint64_t ChildrenMask(const double* node) const;
  // Sets bit `child` of the children mask; the check is stale until Seal.
  // REQUIRES: child < kMaxFanout
  void SetChild(double* node, uint32_t child) const;

  // In-place update of one cell of a stored node: value old -> new at `offset`
  // within the node's run of `count` cells. `exact` is new − old and
  // new² − old² as integers (integer dtypes), else 0. A NaN or infinite value moves between
  // the non-finite counts and the finite moments (which count it as 0).
  // Extremes are widened when the new value exceeds them. The check is left
  // stale: the caller Seals the node before readers may look (chunk end).
  struct UpdateOutcome {
    bool extremes_may_shrink = false;  // the old value was an extreme: recompute extremes
    bool drifted = false;              // rounding drift past kDriftLimit: recompute the node
  };
  UpdateOutcome ApplyUpdate(double* node, uint64_t count, uint64_t offset, double old_value, double new_value,
                            const ExactChange& exact) const;
  // The gathered change of several distinct cells of the node, each finite
  // before and after (node_delta.h), applied at once: what ApplyUpdate per
  // cell gives, up to rounding, which the drift slot is charged with (the
  // per-change charge once, plus m · Σ|(n − K)² − (o − K)²| for the m changes
  // summed first). Extremes may shrink when an old value was one.
  // REQUIRES: every cell of the delta finite before and after
  UpdateOutcome ApplyDelta(double* node, uint64_t count, const NodeDelta& d) const;
  // The node's value shift K (the s2 sums of a delta are rebased onto it).
  double Shift(const double* node) const;

  // The extremes stored in a node; and writes new ones.
  Extremes GetExtremes(const double* node) const;
  void SetExtremes(double* node, const Extremes& e) const;

 private:
  uint64_t ComputeCheck(uint64_t slot, const double* node) const;

  const int order_;
  const bool bind_slot_;  // the check covers the node's slot (tree files)
};

// What a query read, for --json and the benchmarks. Per range of a batch:
// the range's own reads, as if alone (a batch merges overlapping and touching
// reads, so these summed over a batch count shared bytes more than once);
// as a batch's total (SummarizeRanges' `read`): what went to the devices.
struct QueryCost {
  uint64_t array_bytes = 0;  // bytes read from the array file
  uint64_t tier_bytes = 0;   // bytes read from the disk tier
  uint64_t ram_nodes = 0;    // nodes used from the RAM tier
  uint64_t requests = 0;     // read requests in the query's batch

  QueryCost& operator+=(const QueryCost& o) {
    array_bytes += o.array_bytes;
    tier_bytes += o.tier_bytes;
    ram_nodes += o.ram_nodes;
    requests += o.requests;
    return *this;
  }
};

// A half-open range of element indices [begin, end): one query of a batch.
struct IndexRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t size() const { return end - begin; }
  bool operator==(const IndexRange&) const = default;
};

// Why [p, q) (sides already counted from the end: p + length for a negative
// P) is no range of an array of `length` elements, e.g. "P > Q (500 > 100)",
// "Q = 2000 is past its end"; "" when it is one. The one wording of the CLI's
// ranges and Python's. REQUIRES: length <= 2^63 - 1
std::string RangeProblem(int64_t p, int64_t q, uint64_t length);

}  // namespace momenta
