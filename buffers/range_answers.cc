#include "buffers/range_answers.h"

namespace momenta {

Result<StatAnswer> RangeAnswers::AnswerOne(size_t k, Stat stat, const StatParams& params) const {
  if (IsEndStat(stat) && !ends_.empty()) return EndAnswer(stat, ends_[k]);
  if (index_alone_) return ComputeIndexStat(stat, params, index_[k], ranges_[k].begin);
  return ComputeStat(stat, params, full_[k], ranges_[k].begin, dtype_);
}

Result<std::vector<StatAnswer>> RangeAnswers::Answer(size_t k, std::span<const Stat> stats,
                                                     const StatParams& params) const {
  std::vector<StatAnswer> answers;
  answers.reserve(stats.size());
  for (Stat s : stats) {
    auto answer = AnswerOne(k, s, params);
    if (!answer.ok()) return answer.status();
    answers.push_back(std::move(answer).value());
  }
  return answers;
}

}  // namespace momenta
