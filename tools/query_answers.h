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
#include "buffers/ola/ola_statistics.h"  // OlaAlone
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta::cli {

// Shortest round-trip text; NaN is "nan" whatever its sign bit, infinities
// "inf" and "-inf" (as NumPy prints them).
std::string FormatNumber(long double v);

// "sum 8725 mean 87.25 moments 100 8725 ...": each stat's name, then its values.
std::string StatsText(const std::vector<StatAnswer>& answers, const char* separator);
// {"sum":8725,"moments":[...],...}; NaN and infinities as the strings "NaN",
// "Infinity", "-Infinity".
std::string StatsJson(const std::vector<StatAnswer>& answers);
// "[P,Q]"
std::string RangeJson(const IndexRange& range);

}  // namespace momenta::cli
