// The answers of `momenta query`: statistics computed from a range's summary
// and written as text or JSON, the same for one range, a batch (--ranges) and
// an overview (--bins).
#pragma once

#include <string>
#include <vector>

#include <span>

#include "buffers/buffered_array.h"
#include "buffers/ola_statistics.h"  // OlaAlone
#include "buffers/range_summary.h"
#include "buffers/statistics.h"
#include "storage/dtype.h"
#include "storage/status.h"
#include "tools/range_ends.h"

namespace momenta::cli {

// Shortest round-trip text; NaN is "nan" whatever its sign bit, infinities
// "inf" and "-inf" (as NumPy prints them).
std::string FormatNumber(long double v);

// Every stat of `stats` over `range` (its summary; first and last from `ends`,
// read when NeedsEnds(stats): ReadRangeEnds), in order; the first that fails
// gives its error (e.g. the mean of an empty range).
Result<std::vector<StatAnswer>> AnswerStats(const std::vector<Stat>& stats, const StatParams& params,
                                            const RangeSummary& summary, const IndexRange& range, DType dtype,
                                            const RangeEnds* ends = nullptr);

// The Ola buffer's answers to `stats` over `range` (first and last read from
// the array). REQUIRES: OlaAlone(stats)
Result<std::vector<StatAnswer>> AnswerFromOla(BufferedArray& ba, const std::vector<Stat>& stats,
                                              const StatParams& params, const IndexRange& range,
                                              QueryCost* cost = nullptr);
// A batch's summaries, for answering statistics: kind ola with every stat
// asked OlaAlone, the Ola buffer's index moments alone (SummarizeIndexBatch:
// no partial leaf of the tree read); else the full summaries. With first or
// last asked, each range's two end elements too (ReadRangeEnds).
class BatchSummaries {
 public:
  // `stats`: every statistic any range will be asked (what to read).
  // *read is added what the batch asked of the devices (its reads once
  // merged: BufferedArray::SummarizeBatch's `read`; the end elements' reads).
  // REQUIRES of every range: inside the array (else OutOfRange before anything is read).
  [[nodiscard]] Status Summarize(BufferedArray& ba, std::span<const IndexRange> ranges,
                                 const std::vector<Stat>& stats, QueryCost* read);
  bool ola_alone() const { return ola_alone_; }
  // Every stat of `stats` over ranges[k] (as AnswerStats).
  Result<std::vector<StatAnswer>> Answer(size_t k, const std::vector<Stat>& stats, const StatParams& params,
                                         const IndexRange& range, DType dtype) const;
  // One stat (ComputeStat / ComputeIndexStat).
  Result<StatAnswer> AnswerOne(size_t k, Stat stat, const StatParams& params, const IndexRange& range,
                               DType dtype) const;

 private:
  bool ola_alone_ = false;
  std::vector<RangeSummary> full_;
  std::vector<IndexMoments> index_;
  std::vector<RangeEnds> ends_;  // empty unless first or last was asked
};

// THE call that asks the array for one range's statistics (the CLI's `query
// --range` and the server's /stats both come here): kind ola with every stat
// OlaAlone, from the Ola buffer's index moments alone; else from the range's
// summary. *cost (optional) receives what it read; notices are printed on
// stderr. An error of the summary comes as it is; a statistic the range
// cannot give (the mean of nothing) with `path` before its message.
Result<std::vector<StatAnswer>> AnswerRange(BufferedArray& ba, const std::string& path, const std::vector<Stat>& stats,
                                            const StatParams& params, const IndexRange& range, QueryCost* cost);
// `momenta query --range --json`'s line (without its newline): {"path":...,
// "range":[P,Q],"stats":{...},"elapsed_us":T,"array_bytes_read":...,"open":{...}}.
std::string RangeAnswerJson(BufferedArray& ba, const std::string& path, const IndexRange& range,
                            const std::vector<StatAnswer>& answers, double micros, const QueryCost& cost);

// "sum 8725 mean 87.25 moments 100 8725 ...": each stat's name, then its values.
std::string StatsText(const std::vector<StatAnswer>& answers, const char* separator);
// {"sum":8725,"moments":[...],...}; NaN and infinities as the strings "NaN",
// "Infinity", "-Infinity".
std::string StatsJson(const std::vector<StatAnswer>& answers);
// "[P,Q]"
std::string RangeJson(const IndexRange& range);

}  // namespace momenta::cli
