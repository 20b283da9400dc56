// RangeAnswers: what a batch of ranges was summarized into, answered one
// range at a time (BufferedArray::StatBatch fills it): the full summaries, or
// — when the buffer keeps index moments of its own and every statistic asked
// follows from them — those index moments alone. A range may be asked any of
// the statistics the batch was summarized for, in any order. first and last
// (the range's end elements) come from the elements read beside the summaries.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/range_ends.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

class RangeAnswers {
 public:
  RangeAnswers() = default;

  size_t size() const { return ranges_.size(); }
  // Whether the index moments alone were read (none of the tree's partial leaves).
  bool index_alone() const { return index_alone_; }
  // Every stat of `stats` over range k, in order (ComputeStat, or
  // ComputeIndexStat from the index moments alone); the first that fails
  // gives its error, with no context added (e.g. the mean of an empty range).
  // REQUIRES: k < size()
  Result<std::vector<StatAnswer>> Answer(size_t k, std::span<const Stat> stats, const StatParams& params) const;
  // One stat over range k (as Answer).
  Result<StatAnswer> AnswerOne(size_t k, Stat stat, const StatParams& params) const;

 private:
  friend class BufferedArray;
  std::vector<IndexRange> ranges_;
  DType dtype_ = DType::kF8;
  bool index_alone_ = false;
  std::vector<RangeSummary> full_;
  std::vector<IndexMoments> index_;
  std::vector<RangeEnds> ends_;  // empty unless first or last was asked (NeedsEnds)
};

}  // namespace momenta
