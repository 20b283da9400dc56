#include "buffers/tree/progressive_sum.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <thread>

#include "buffers/tree/tree_seqlock.h"  // Epoch: the seqlock on the tree header

namespace momenta {

ProgressiveSum::ProgressiveSum(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q, IoBackend* array_io,
                               Options options)
    : tree_(tree), array_(array), io_(array_io ? *array_io : array.io()), p_(p), q_(q), options_(options) {
  assert(p <= q && q <= array.length());
  options_.pieces_per_end = std::max<uint64_t>(options_.pieces_per_end, 1);
  options_.min_piece = std::max<uint64_t>(options_.min_piece, 1);
}

// Leaf `leaf` has cells [in_begin, in_end) inside the range and some outside:
// its node, and the reads of its shorter side, split into pieces.
Status ProgressiveSum::AddPartialLeaf(uint64_t leaf, uint64_t in_begin, uint64_t in_end) {
  const TreeLayout& layout = tree_.layout();
  MOMENTA_RETURN_IF_ERROR(tree_.VerifyNode(1, leaf, tree_.Node(1, leaf)));
  PartialLeaf e;
  e.leaf = tree_.Summary(1, leaf);
  e.leaf_index = leaf;
  e.fresh = fresh_;
  e.inside_first = in_begin - layout.node_first(1, leaf);
  e.inside = in_end - in_begin;
  const uint64_t first = layout.node_first(1, leaf), end = layout.node_end(1, leaf);
  const size_t index = ends_.size();
  ends_.push_back(std::move(e));
  // The shorter side: the inside, or the (one or two) runs outside.
  struct Run {
    uint64_t begin, end;
  };
  std::vector<Run> runs;
  const bool inside = in_end - in_begin <= (end - first) - (in_end - in_begin);
  if (inside) {
    runs.push_back({in_begin, in_end});
  } else {
    if (first < in_begin) runs.push_back({first, in_begin});
    if (in_end < end) runs.push_back({in_end, end});
  }
  uint64_t side = 0;
  for (const Run& r : runs) side += r.end - r.begin;
  const uint64_t piece = std::max(options_.min_piece, (side + options_.pieces_per_end - 1) / options_.pieces_per_end);
  for (const Run& r : runs)
    for (uint64_t at = r.begin; at < r.end; at += piece)
      steps_.push_back({index, at, std::min(r.end, at + piece), inside});
  return Status::OK();
}

Result<SumBound> ProgressiveSum::Start() {
  // The nodes are taken between two equal, even values of the seqlock (no
  // writer's chunk ran meanwhile), as BufferedArray's queries take theirs; a
  // node that fails its check then is damage, not a chunk in progress.
  return UnderSeqlock(tree_.header(), tree_.path(), kSeqlockPatienceNs, [&] { return TakeNodes(); });
}

Result<SumBound> ProgressiveSum::TakeNodes() {
  // Updates since the build (replays of the log included) leave a node's
  // rounding at the magnitudes it held; without any, the nodes describe the
  // data as it is (the tighter allowance, range_bounds.cc).
  fresh_ = std::atomic_ref<uint64_t>(tree_.header().updates_since_build).load(std::memory_order_acquire) == 0;
  whole_ = WholeNodes{};
  whole_.fresh = fresh_;
  ends_.clear();
  steps_.clear();
  next_ = 0;
  const TreeLayout& layout = tree_.layout();
  uint64_t whole_begin = p_, whole_end = q_;
  if (p_ < q_) {
    const uint64_t span = layout.leaf_span();
    const uint64_t left = p_ / span, right = (q_ - 1) / span;
    if (left == right) {
      if (p_ != layout.node_first(1, left) || q_ != layout.node_end(1, left)) {
        MOMENTA_RETURN_IF_ERROR(AddPartialLeaf(left, p_, q_));
        whole_begin = whole_end = p_;
      }
    } else {
      if (p_ != layout.node_first(1, left)) {
        whole_begin = layout.node_end(1, left);
        MOMENTA_RETURN_IF_ERROR(AddPartialLeaf(left, p_, whole_begin));
      }
      if (q_ != layout.node_end(1, right)) {
        whole_end = layout.node_first(1, right);
        MOMENTA_RETURN_IF_ERROR(AddPartialLeaf(right, whole_end, q_));
      }
    }
  }
  // The whole nodes: the decomposition of the leaf-aligned middle has no raw cells.
  if (whole_begin < whole_end) {
    const TreeLayout::Plan plan = layout.Decompose(whole_begin, whole_end);
    assert(plan.raw_left_begin == plan.raw_left_end && plan.raw_right_begin == plan.raw_right_end);
    for (const TreeLayout::NodeRun& run : plan.runs) {
      MomentTree::ParentMemo memo;
      for (uint64_t j = run.first; j < run.first + run.count; ++j) {
        MOMENTA_RETURN_IF_ERROR(tree_.VerifyNode(run.level, j, tree_.Node(run.level, j), &memo));
        whole_.Add(tree_.Summary(run.level, j));
      }
    }
  }
  last_ = BoundSum(whole_, ends_, array_.dtype());
  return last_;
}

SumBound NarrowBound(const SumBound& last, const SumBound& fresh) {
  if (fresh.nan == NanState::kCertain || last.nan == NanState::kCertain) return fresh;
  SumBound b = fresh;
  if (b.is_integer) {
    b.int_lower = std::max(b.int_lower, last.int_lower);
    b.int_upper = std::min(b.int_upper, last.int_upper);
    if (b.int_lower > b.int_upper) return fresh;  // the buffer changed under the reads: the new bound stands
    b.int_estimate = std::clamp(b.int_estimate, b.int_lower, b.int_upper);
  }
  b.lower = std::max(b.lower, last.lower);
  b.upper = std::min(b.upper, last.upper);
  if (!(b.lower <= b.upper)) return fresh;
  b.estimate = std::clamp(b.estimate, b.lower, b.upper);
  return b;
}

Result<SumBound> ProgressiveSum::Next() {
  assert(!done());
  const Step s = steps_[next_++];  // a copy: MaybeReadInside may insert into steps_
  const size_t item = array_.itemsize();
  const uint64_t n = s.end - s.begin;
  bytes_.resize(n * item);
  MOMENTA_RETURN_IF_ERROR(io_.Read(array_.ByteOffset(s.begin), bytes_.size(), bytes_.data()));
  array_bytes_ += bytes_.size();
  PartialLeaf& e = ends_[s.leaf];
  KnownCells& known = s.inside ? e.known_inside : e.known_outside;
  const double shift = e.leaf.values.shift();
  for (uint64_t k = 0; k < n; ++k) known.Add(DecodeValue(array_.dtype(), bytes_.data() + k * item), shift);
  const bool side_done = next_ == steps_.size() || steps_[next_].leaf != s.leaf || steps_[next_].inside != s.inside;
  if (side_done && !s.inside) MaybeReadInside(s.leaf);
  last_ = NarrowBound(last_, BoundSum(whole_, ends_, array_.dtype()));
  return last_;
}

// The outside of leaf `leaf` has been read: its inside sum is the leaf's sum
// minus it, as exact as the leaf's stored sum (ε · Σ|a| over the whole leaf).
// When that allowance is wide against the inside sum itself — a huge value
// outside the range, or values cancelling inside — the inside is read too
// (its cells' own sum has only rounding), in pieces, right after.
void ProgressiveSum::MaybeReadInside(size_t leaf) {
  if (DTypeIsInteger(array_.dtype())) return;  // integer sums are exact already
  const PartialLeaf& e = ends_[leaf];
  WholeNodes none;
  none.fresh = fresh_;
  const SumBound alone = BoundSum(none, {&e, 1}, array_.dtype());
  if (alone.nan != NanState::kNo || !std::isfinite(alone.lower) || !std::isfinite(alone.upper)) return;
  if (alone.upper - alone.lower <= kReadInsideWidth * std::fabs(alone.estimate)) return;
  const TreeLayout& layout = tree_.layout();
  const uint64_t first = layout.node_first(1, e.leaf_index), end = layout.node_end(1, e.leaf_index);
  const uint64_t begin = std::max(first, p_), stop = std::min(end, q_);
  const uint64_t piece =
      std::max(options_.min_piece, (stop - begin + options_.pieces_per_end - 1) / options_.pieces_per_end);
  std::vector<Step> inside;
  for (uint64_t at = begin; at < stop; at += piece) inside.push_back({leaf, at, std::min(stop, at + piece), true});
  steps_.insert(steps_.begin() + static_cast<std::ptrdiff_t>(next_), inside.begin(), inside.end());
  // The outside cells are then counted twice unless the inside starts afresh:
  // the bound uses the inside cells read, and drops what was read outside.
  ends_[leaf].known_outside = KnownCells{};
}

}  // namespace momenta
