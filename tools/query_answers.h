// The answers of `momenta query` written as text or JSON, the same for one
// range, a batch (--ranges) and an overview (--bins). The answers themselves
// come from the facade (BufferedArray::Stat, StatBatch).
#pragma once

#include <string>
#include <vector>

#include <span>
#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta::cli {

// Shortest round-trip text; NaN is "nan" whatever its sign bit, infinities
// "inf" and "-inf" (as NumPy prints them).
std::string FormatNumber(long double v);

// THE call that asks the array for one range's statistics (the CLI's `query
// --range` and the server's /stats both come here): the facade's Stat, which
// chooses what to read; notices are printed on stderr. *cost (optional)
// receives what it read, after merging.
Result<std::vector<StatAnswer>> AnswerRange(BufferedArray& ba, const std::vector<Stat>& stats, const StatParams& params,
                                            const IndexRange& range, QueryCost* cost);
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
