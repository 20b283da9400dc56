#include "tools/query_answers.h"

#include <charconv>
#include <cmath>

#include "storage/array_file.h"
#include "storage/json_writer.h"
#include "tools/cli_common.h"  // PrintNotice

namespace momenta::cli {
namespace {

std::string ValueText(const StatAnswer& answer, size_t k) {
  return answer.is_integer ? Int128ToString(answer.integer) : FormatNumber(answer.values[k]);
}

bool IsList(Stat stat) { return stat == Stat::kMoments || stat == Stat::kPolyfit; }

}  // namespace

std::string FormatNumber(long double v) {
  if (std::isnan(v)) return "nan";
  char buf[40];
  const double d = static_cast<double>(v);
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

Result<std::vector<StatAnswer>> AnswerStats(const std::vector<Stat>& stats, const StatParams& params,
                                            const RangeSummary& summary, const IndexRange& range, DType dtype,
                                            const RangeEnds* ends) {
  std::vector<StatAnswer> answers;
  answers.reserve(stats.size());
  for (Stat s : stats) {
    auto answer = ends && IsEndStat(s) ? EndAnswer(s, *ends) : ComputeStat(s, params, summary, range.begin, dtype);
    if (!answer.ok()) return answer.status();
    answers.push_back(std::move(answer).value());
  }
  return answers;
}


namespace {

Result<std::vector<StatAnswer>> AnswerIndexStats(const std::vector<Stat>& stats, const StatParams& params,
                                                 const IndexMoments& index, const IndexRange& range,
                                                 const RangeEnds* ends) {
  std::vector<StatAnswer> answers;
  for (Stat s : stats) {
    auto answer = ends && IsEndStat(s) ? EndAnswer(s, *ends) : ComputeIndexStat(s, params, index, range.begin);
    if (!answer.ok()) return answer.status();
    answers.push_back(std::move(answer).value());
  }
  return answers;
}

}  // namespace

Result<std::vector<StatAnswer>> AnswerFromOla(BufferedArray& ba, const std::vector<Stat>& stats,
                                              const StatParams& params, const IndexRange& range, QueryCost* cost) {
  auto index = ba.SummarizeIndex(range.begin, range.end, nullptr, cost);
  if (!index.ok()) return index.status();
  std::vector<RangeEnds> ends;
  if (NeedsEnds(stats)) MOMENTA_RETURN_IF_ERROR(ReadRangeEnds(ba.array(), {&range, 1}, &ends, cost));
  return AnswerIndexStats(stats, params, *index, range, ends.empty() ? nullptr : &ends[0]);
}

Result<std::vector<StatAnswer>> AnswerRange(BufferedArray& ba, const std::string& path, const std::vector<Stat>& stats,
                                            const StatParams& params, const IndexRange& range, QueryCost* cost) {
  Result<std::vector<StatAnswer>> answers = std::vector<StatAnswer>{};
  if (ba.ola() && OlaAlone(stats, ba.array().dtype())) {  // kind ola: its index moments alone
    answers = AnswerFromOla(ba, stats, params, range, cost);
    for (const auto& n : ba.TakeNotices()) PrintNotice(n);
    if (!answers.ok() && answers.status().code() != Status::Code::kInvalidArgument) return answers.status();
  } else {
    auto summary = ba.Summarize(range.begin, range.end, NeedsExtremes(stats), cost);  // cost: after merging
    for (const auto& n : ba.TakeNotices()) PrintNotice(n);
    if (!summary.ok()) return summary.status();
    std::vector<RangeEnds> ends;  // first, last: the range's end elements
    if (NeedsEnds(stats)) MOMENTA_RETURN_IF_ERROR(ReadRangeEnds(ba.array(), {&range, 1}, &ends, cost));
    answers = AnswerStats(stats, params, *summary, range, ba.array().dtype(), ends.empty() ? nullptr : &ends[0]);
  }
  if (!answers.ok()) return answers.status().WithContext(path);
  return answers;
}

std::string RangeAnswerJson(BufferedArray& ba, const std::string& path, const IndexRange& range,
                            const std::vector<StatAnswer>& answers, double micros, const QueryCost& cost) {
  std::string out = "{\"path\":" + JsonWriter().String(path).str() + ",\"range\":" + RangeJson(range) +
                    ",\"stats\":" + StatsJson(answers);
  JsonWriter tail;
  tail.BeginObject().Key("elapsed_us").Double(micros).Key("array_bytes_read").UInt(cost.array_bytes);
  tail.Key("tier_bytes_read").UInt(cost.tier_bytes).Key("read_requests").UInt(cost.requests);
  tail.Key("ram_nodes").UInt(cost.ram_nodes).Key("io").String(ba.array().io().Name());
  // What opening cost besides the query: a (re)build or a replay, timed apart.
  const OpenReport& opened = ba.open_report();
  tail.Key("open").BeginObject().Key("rebuilt").Bool(opened.full_pass);
  if (opened.full_pass)
    tail.Key("rebuild_reason").String(opened.full_pass_reason).Key("rebuild_us").Double(opened.full_pass_seconds * 1e6)
        .Key("rebuild_bytes_read").UInt(opened.full_pass_bytes_read);
  tail.Key("replayed").UInt(opened.replayed).Key("recovered").Bool(opened.recovered).EndObject().EndObject();
  return out + "," + tail.str().substr(1);
}

Status BatchSummaries::Summarize(BufferedArray& ba, std::span<const IndexRange> ranges,
                                 const std::vector<Stat>& stats, QueryCost* read) {
  ola_alone_ = OlaAlone(stats, ba.array().dtype()) && ba.ola() != nullptr;
  ends_.clear();
  if (!ola_alone_) {
    MOMENTA_RETURN_IF_ERROR(ba.SummarizeBatch(ranges, NeedsExtremes(stats), &full_, nullptr, nullptr, read));
  } else {
    // Each range's Ola cells are a batch of their own: the ranges' reads are the devices'.
    std::vector<QueryCost> costs;
    MOMENTA_RETURN_IF_ERROR(ba.SummarizeIndexBatch(ranges, &index_, &costs));
    for (const QueryCost& c : costs) *read += c;
  }
  if (NeedsEnds(stats)) return ReadRangeEnds(ba.array(), ranges, &ends_, read);
  return Status::OK();
}

Result<std::vector<StatAnswer>> BatchSummaries::Answer(size_t k, const std::vector<Stat>& stats,
                                                       const StatParams& params, const IndexRange& range,
                                                       DType dtype) const {
  const RangeEnds* ends = ends_.empty() ? nullptr : &ends_[k];
  if (ola_alone_) return AnswerIndexStats(stats, params, index_[k], range, ends);
  return AnswerStats(stats, params, full_[k], range, dtype, ends);
}

Result<StatAnswer> BatchSummaries::AnswerOne(size_t k, Stat stat, const StatParams& params, const IndexRange& range,
                                             DType dtype) const {
  if (IsEndStat(stat) && !ends_.empty()) return EndAnswer(stat, ends_[k]);
  if (ola_alone_) return ComputeIndexStat(stat, params, index_[k], range.begin);
  return ComputeStat(stat, params, full_[k], range.begin, dtype);
}

std::string StatsText(const std::vector<StatAnswer>& answers, const char* separator) {
  std::string out;
  for (size_t s = 0; s < answers.size(); ++s) {
    if (s) out += separator;
    out += StatName(answers[s].stat);
    for (size_t k = 0; k < answers[s].values.size(); ++k) {
      out += ' ';  // appends: GCC 12 warns falsely (-Wrestrict) on " " + std::string
      out += ValueText(answers[s], k);
    }
  }
  return out;
}

std::string StatsJson(const std::vector<StatAnswer>& answers) {
  std::string out = "{";
  for (size_t s = 0; s < answers.size(); ++s) {
    if (s) out += ',';
    out += JsonWriter().String(StatName(answers[s].stat)).str() + ":";
    const bool list = IsList(answers[s].stat);
    if (list) out += '[';
    for (size_t k = 0; k < answers[s].values.size(); ++k) {
      if (k) out += ',';
      const long double v = answers[s].values[k];
      if (answers[s].is_integer || std::isfinite(v)) out += ValueText(answers[s], k);
      else out += JsonWriter().Double(static_cast<double>(v)).str();  // "NaN", "Infinity", "-Infinity"
    }
    if (list) out += ']';
  }
  return out + "}";
}

std::string RangeJson(const IndexRange& range) {
  std::string out = "[";  // appends: GCC 12 warns falsely (-Wrestrict) on "[" + std::string
  out += std::to_string(range.begin);
  out += ',';
  out += std::to_string(range.end);
  return out + "]";
}

}  // namespace momenta::cli
