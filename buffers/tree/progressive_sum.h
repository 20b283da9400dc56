// ProgressiveSum: the sum of a range [p, q), answered first from the moment
// buffer's nodes alone (no array read: range_bounds.h) and then ever more
// tightly as the partial end leaves are read, a piece at a time.
//
// Start() takes the whole nodes inside the range and the (up to two) partial
// end leaves from the tree (through its mapping; every node passes its check,
// MomentTree::VerifyNode) and bounds the sum. Each Next() reads one piece of
// one partial leaf from the array — the leaf's shorter side (the cells
// inside the range, or those outside it), the left end first, in pieces of
// about 1/pieces_per_end of that side; and when the outside was read and
// the leaf's own allowance still leaves its inside sum wide (a huge value
// outside the range), the inside too — and bounds the sum again; the
// interval returned is the intersection with the previous one, so it never
// widens. Once done(), every partial leaf is determined and the interval is
// only the rounding allowance (SumBound::exact).
//
// A reader racing a writer: Start takes the nodes under the tree header's
// seqlock (consistent with one log sequence; IOError after 5 s of a writer's
// chunks); each later bound holds for the array as the leaf and the cells it
// used were when read, so under concurrent updates it bounds a moving
// target. Callers wanting one consistent answer take the ordinary query
// (BufferedArray::Summarize) at the end.
// Not thread-safe; one object per query.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "buffers/algebra/range_bounds.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"

namespace momenta {

// How ProgressiveSum splits the reads of an end leaf.
struct ProgressiveOptions {
  uint64_t pieces_per_end = 4;  // reads per partial leaf (fewer for short sides)
  uint64_t min_piece = 256;     // cells per read, at least
};

// `fresh` intersected with `last` (both bound the same sum), the estimate
// clamped into it; `fresh` alone when the two do not meet (the buffer changed
// between them) or either says the sum is certainly NaN.
SumBound NarrowBound(const SumBound& last, const SumBound& fresh);

class ProgressiveSum {
 public:
  using Options = ProgressiveOptions;

  // REQUIRES: p <= q <= array.length(); tree describes array; both outlive
  // this object. array_io: the backend array cells are read through (null:
  // array.io()).
  ProgressiveSum(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q, IoBackend* array_io = nullptr,
                 Options options = {});

  // The first bound, from the nodes alone: reads no byte of the array.
  // Corruption (naming the tree) when a node fails its check.
  Result<SumBound> Start();
  // No piece left to read (also right after Start when the range is aligned
  // to leaves or empty).
  bool done() const { return next_ >= steps_.size(); }
  // Reads the next piece and returns the narrower bound.
  // REQUIRES: Start() succeeded and !done()
  Result<SumBound> Next();

  uint64_t array_bytes_read() const { return array_bytes_; }
  // What the bounds are made of (after Start, and after each Next), for other
  // sums over the same pieces (square_bounds.h).
  const WholeNodes& whole() const { return whole_; }
  std::span<const PartialLeaf> ends() const { return ends_; }
  uint64_t steps() const { return steps_.size(); }  // pieces planned so far (an inside read may add some)

 private:
  // One read: cells [begin, end) of partial leaf `leaf` (an index into
  // ends_), on its inside or outside.
  struct Step {
    size_t leaf;
    uint64_t begin, end;
    bool inside;
  };
  [[nodiscard]] Status AddPartialLeaf(uint64_t leaf, uint64_t in_begin, uint64_t in_end);
  void MaybeReadInside(size_t leaf);
  // Start's work, once: the nodes read and the first bound.
  Result<SumBound> TakeNodes();
  // How long Start waits for a writer's chunks to leave the nodes alone.
  static constexpr int64_t kSeqlockPatienceNs = 5'000'000'000;
  // The width (relative to its estimate) past which a leaf taken as its sum
  // minus its outside is read on its inside too.
  static constexpr double kReadInsideWidth = 1e-6;

  MomentTree& tree_;
  ArrayFile& array_;
  IoBackend& io_;
  const uint64_t p_, q_;
  Options options_;
  WholeNodes whole_;
  std::vector<PartialLeaf> ends_;
  std::vector<Step> steps_;
  size_t next_ = 0;     // steps_[next_] is the next read
  bool fresh_ = false;  // the tree had no incremental update since its build (at Start)
  SumBound last_;       // the last bound returned
  uint64_t array_bytes_ = 0;
  std::vector<char> bytes_;
};

}  // namespace momenta
