// BufferedArray's statistics (Stat, StatBatch): what to read for them is
// decided here once — the full summaries, or the index moments alone where the
// buffer keeps its own and every statistic follows from them — and the
// answers computed from it, so no front end chooses a buffer kind or derives
// a statistic. Also the parts for tests and the progressive sums.
#include <shared_mutex>
#include <utility>
#include <vector>

#include "buffers/buffered_array_internal.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/ola/ola_statistics.h"

namespace momenta {

bool BufferedArray::KeepsIndexMoments() {
  std::shared_lock<std::shared_mutex> shared(impl_->state.tree_mutex_);
  return impl_->state.buffer_->KeepsIndexMoments();
}

Result<std::vector<StatAnswer>> BufferedArray::Stat(uint64_t p, uint64_t q, std::span<const momenta::Stat> stats,
                                                    const StatParams& params, QueryCost* cost) {
  RangeAnswers answers;
  answers.ranges_ = {IndexRange{p, q}};
  answers.dtype_ = array().dtype();
  answers.index_alone_ = KeepsIndexMoments() && OlaAlone(stats, answers.dtype_);
  if (answers.index_alone_) {
    auto index = SummarizeIndex(p, q, nullptr, cost);
    if (!index.ok()) return index.status();
    answers.index_.push_back(std::move(index).value());
  } else {
    auto summary = Summarize(p, q, NeedsExtremes(stats), cost);  // cost: after merging
    if (!summary.ok()) return summary.status();
    answers.full_.push_back(std::move(summary).value());
  }
  if (NeedsEnds(stats)) {
    const IndexRange range{p, q};
    MOMENTA_RETURN_IF_ERROR(ReadRangeEnds(array(), {&range, 1}, &answers.ends_, cost));
  }
  auto out = answers.Answer(0, stats, params);
  if (!out.ok()) return out.status().WithContext(array().path());
  return out;
}

Status BufferedArray::StatBatch(std::span<const IndexRange> ranges, std::span<const momenta::Stat> stats,
                                RangeAnswers* out, QueryCost* read) {
  out->ranges_.assign(ranges.begin(), ranges.end());
  out->dtype_ = array().dtype();
  out->index_alone_ = KeepsIndexMoments() && OlaAlone(stats, out->dtype_);
  out->full_.clear();
  out->index_.clear();
  out->ends_.clear();
  if (!out->index_alone_) {
    MOMENTA_RETURN_IF_ERROR(SummarizeBatch(ranges, NeedsExtremes(stats), &out->full_, nullptr, nullptr, read));
  } else {
    // Each range's cells are a batch of their own: the ranges' reads are the devices'.
    std::vector<QueryCost> costs;
    MOMENTA_RETURN_IF_ERROR(SummarizeIndexBatch(ranges, &out->index_, &costs));
    if (read)
      for (const QueryCost& c : costs) *read += c;
  }
  // first and last: no summary holds them; the ranges' end elements, read as they are now.
  if (NeedsEnds(stats)) return ReadRangeEnds(array(), ranges, &out->ends_, read);
  return Status::OK();
}

MomentTree& BufferedArrayParts::Tree(BufferedArray& ba) { return *ba.impl_->state.tree_; }
const OlaFile* BufferedArrayParts::Ola(const BufferedArray& ba) { return ba.impl_->state.buffer_->ola_file(); }

std::unique_ptr<OlaProgressiveSum> ProgressiveSumOf(BufferedArray& ba, uint64_t p, uint64_t q) {
  return std::make_unique<OlaProgressiveSum>(TreeOf(ba), OlaOf(ba), ba.array(), p, q);
}

std::unique_ptr<ProgressiveSum> TreePiecesOf(BufferedArray& ba, uint64_t p, uint64_t q) {
  return std::make_unique<ProgressiveSum>(TreeOf(ba), ba.array(), p, q);
}

}  // namespace momenta
