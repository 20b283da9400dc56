#include "buffers/ola/ola_progressive.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "buffers/ola/ola_refine.h"
#include "buffers/tree/tree_seqlock.h"  // Epoch: the seqlock on the tree header

namespace momenta {
namespace {

// The Ola buffer's stated accuracy relative to Σ|a| over the reach (ola_buffer.h).
constexpr long double kOlaRelativeError = 1e-9L;
// The long-double arithmetic's share: far above its ~1e-19 per operation times
// the operations' count and the weights' growth.
constexpr long double kArithmeticSlack = 1e-15L;

long double MaxAbs(const Extremes& e) {
  return std::max(std::fabs(static_cast<long double>(e.min)), std::fabs(static_cast<long double>(e.max)));
}

}  // namespace

OlaProgressiveSum::OlaProgressiveSum(MomentTree& tree, const OlaFile* ola, ArrayFile& array, uint64_t p, uint64_t q,
                                     IoBackend* array_io)
    : tree_(tree), ola_(ola), array_(array), p_(p), q_(q), tree_sum_(tree, array, p, q, array_io) {}

Result<SumBound> OlaProgressiveSum::Start() {
  auto first = tree_sum_.Start();
  if (!first.ok()) return first;
  last_ = *first;
  // After updates, the slots' rounding is bounded through the largest |a|
  // any cell has held (the Ola header's max_abs_held), not the tree's
  // extremes of what the cells hold now; unusable when that is not finite.
  levels_ = ola_ != nullptr && p_ < q_ && !DTypeIsInteger(array_.dtype()) && last_.nan == NanState::kNo &&
            std::isfinite(last_.lower) && std::isfinite(last_.upper) &&
            (FreshBuild() || std::isfinite(ola_->max_abs_held()));
  if (!levels_) return last_;
  next_level_ = ola_->layout().levels();
  return last_;
}

Result<SumBound> OlaProgressiveSum::Next() {
  assert(!done());
  if (!levels_) return tree_sum_.Next();
  const int k = next_level_--;
  auto bound = LevelBound(k);
  if (!bound.ok()) return bound;
  level_ = k;
  last_ = NarrowBound(last_, *bound);
  return last_;
}

Result<SumBound> OlaProgressiveSum::LevelBound(int k) {
  // Between two equal, even values of the seqlock no writer's chunk ran, so
  // the slots and leaves read describe one state (a failed check then is damage).
  return UnderSeqlock(tree_.header(), tree_.path(), kSeqlockPatienceNs, [&] { return LevelBoundOnce(k); });
}

Result<SumBound> OlaProgressiveSum::LevelBoundOnce(int k) {
  const OlaBuffer& ola = ola_->buffer();
  const OlaLayout& layout = ola.layout();
  MOMENTA_RETURN_IF_ERROR(ola_->CheckSlots(ola.SlotsFor(p_, q_)));
  const long double cut = ola.AnswerAbove(p_, q_, k).moment(0);  // A_k

  // Σ_{c∈D_k} w_c a_c, leaf by leaf: [lo, hi] and a guess.
  const std::vector<IndexRange> runs = OlaResidualCells(layout, k, p_, q_);
  uint64_t cells = 0;
  for (const IndexRange& r : runs) cells += r.size();
  const bool exact_weights = cells <= kExactWeightCells;
  const long double w_bound = OlaResidualWeightBound(layout, k);
  const OlaStencil& stencil = ola.stencil();
  const uint64_t span = tree_.layout().leaf_span();
  long double lo = 0, hi = 0, guess = 0, magnitude = std::fabs(cut);
  for (const IndexRange& run : runs) {
    std::vector<long double> w;
    if (exact_weights) w = OlaResidualWeights(layout, stencil, k, p_, q_, run);
    for (uint64_t leaf = run.begin / span; leaf * span < run.end; ++leaf) {
      MOMENTA_RETURN_IF_ERROR(tree_.VerifyNode(1, leaf, tree_.Node(1, leaf)));
      const RangeSummary s = tree_.Summary(1, leaf);
      if (s.nonfinite.total() > 0 || s.extremes.empty())  // not an Ola array's data: no bound from here
        return last_;
      const long double m = s.extremes.min, M = s.extremes.max, top = MaxAbs(s.extremes);
      const uint64_t begin = std::max(run.begin, leaf * span), end = std::min(run.end, (leaf + 1) * span);
      if (!exact_weights) {
        const long double reach = w_bound * static_cast<long double>(end - begin) * top;
        lo -= reach;
        hi += reach;
        magnitude += reach;
        continue;
      }
      const long double mean = s.index.moment(0) / static_cast<long double>(s.count());
      for (uint64_t c = begin; c < end; ++c) {
        const long double wc = w[c - run.begin];
        lo += wc < 0 ? wc * M : wc * m;
        hi += wc < 0 ? wc * m : wc * M;
        guess += wc * mean;
        magnitude += std::fabs(wc) * top;
      }
    }
  }
  // The stored values' rounding: the Ola buffer's bound over [p − R, q + R).
  const uint64_t R =
      std::min<uint64_t>(array_.length(), static_cast<uint64_t>(layout.nodes()) * layout.span(layout.levels()));
  const uint64_t reach_begin = p_ > R ? p_ - R : 0, reach_end = std::min(array_.length(), q_ + R);
  // Σ|a| over the reach: from the tree's leaves on a fresh build, else
  // (updates since) at most the reach's cells times the largest |a| held.
  Result<long double> reach_abs = FreshBuild() ? AbsBound(reach_begin, reach_end)
                                               : Result<long double>(static_cast<long double>(reach_end - reach_begin) *
                                                                     ola_->max_abs_held() * (1 + kArithmeticSlack));
  if (!reach_abs.ok()) return reach_abs.status();
  const long double allowance = kOlaRelativeError * *reach_abs + kArithmeticSlack * magnitude;
  SumBound b;
  b.lower = DoubleBelow(cut + lo - allowance);
  b.upper = DoubleAbove(cut + hi + allowance);
  b.estimate = std::clamp(static_cast<double>(cut + guess), b.lower, b.upper);
  return b;
}

bool OlaProgressiveSum::FreshBuild() const {
  return std::atomic_ref<uint64_t>(tree_.header().updates_since_build).load(std::memory_order_acquire) == 0;
}

Result<long double> OlaProgressiveSum::AbsBound(uint64_t begin, uint64_t end) const {
  const TreeLayout& layout = tree_.layout();
  const uint64_t span = layout.leaf_span();
  // The leaf-aligned cover of [begin, end): whole nodes only.
  const uint64_t first = begin / span * span, last = std::min(layout.length(), (end + span - 1) / span * span);
  long double total = 0;
  if (first >= last) return total;
  const TreeLayout::Plan plan = layout.Decompose(first, last);
  assert(plan.raw_left_begin == plan.raw_left_end && plan.raw_right_begin == plan.raw_right_end);
  for (const TreeLayout::NodeRun& run : plan.runs) {
    MomentTree::ParentMemo memo;
    for (uint64_t j = run.first; j < run.first + run.count; ++j) {
      MOMENTA_RETURN_IF_ERROR(tree_.VerifyNode(run.level, j, tree_.Node(run.level, j), &memo));
      const RangeSummary s = tree_.Summary(run.level, j);
      if (!s.extremes.empty()) total += static_cast<long double>(s.count()) * MaxAbs(s.extremes);
    }
  }
  return total * (1 + kArithmeticSlack);
}

}  // namespace momenta
