// The statistics a range query can ask for, by name, computed from the
// range's RangeSummary. One summary answers any number of them (one pass).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

// New statistics go at the end: a Stat's position is its code in Python (kStatNames).
enum class Stat {
  kSum,
  kCount,
  kMean,
  kVar,
  kStd,
  kMoment,
  kMoments,
  kCom,
  kSpread,
  kPolyfit,
  kMin,
  kMax,
  kSumsq,
  kRms
};
inline constexpr int kStatCount = static_cast<int>(Stat::kRms) + 1;

// "sum", "count", "mean", "var", "std", "moment", "moments", "com", "spread",
// "polyfit", "min", "max", "sumsq", "rms".
std::string_view StatName(Stat s);
// The statistic StatName gives `name`; else InvalidArgument naming `what`, the
// caller's word for where the name came from (a CLI says "--stat").
Result<Stat> ParseStat(std::string_view name, const std::string& what);
// True when any of `stats` needs min/max (the query then reads partial leaves
// on their own side, not as leaf minus complement).
bool NeedsExtremes(std::span<const Stat> stats);

struct StatParams {
  std::optional<int> order;          // moment: K (default 1); moments: 0..K (default: the buffer's J)
  std::optional<long double> about;  // center c (absolute index; default: p)
  int degree = 1;                    // polyfit degree
  int ddof = 0;                      // var/std: 0 population, 1 sample
  bool skipna = false;               // NaN cells left out, as NumPy's nan* functions
};

struct StatAnswer {
  Stat stat = Stat::kSum;
  std::vector<long double> values;  // one value; moments: orders 0..K; polyfit: c_0..c_D
  bool is_integer = false;          // sum/count/sumsq of integers: `integer` holds the exact answer
  Int128 integer = 0;
};

// The answer for `stat` over [p, q) whose summary is `range` (index moments
// about p), for an array of `dtype`. Errors (InvalidArgument, naming the
// stat): an empty range for statistics that divide by the count, an order or
// degree above the buffer's J, weights summing to 0, and the like.
//
// NaN and infinity, as NumPy answers them:
//  - sum mean var std min max count as np.sum np.mean np.var np.std np.min
//    np.max and the length: a NaN in the range makes them NaN (count
//    excepted); ±inf follow IEEE rules (inf − inf is NaN; var and std of a
//    range holding an infinity are NaN).
//  - skipna: as np.nansum np.nanmean np.nanvar np.nanstd np.nanmin np.nanmax;
//    count is the non-NaN count; infinities are not skipped; a range whose
//    cells are all NaN (or fewer than ddof + 1 non-NaN cells, for var/std)
//    answers NaN (NumPy's value, without its warning), sum 0.
//  - sumsq and rms: Σ a_i² and sqrt(Σ a_i² / count), as np.sum(y) and
//    np.sqrt(np.mean(y)) for y = x.astype(np.float64)**2 (NumPy's own x**2
//    of an integer or f4 array wraps or rounds in the array's dtype): a NaN
//    makes them NaN, an infinity +inf, and so does a sum of squares past
//    DBL_MAX (the buffer keeps Σ(a − K)² in doubles); skipna as np.nansum /
//    np.nanmean of y (all NaN: sumsq 0, rms NaN). An empty range has sumsq
//    0; its rms is an error, as the mean's. Float dtypes: both come from the
//    value moments (Σa² = Σ(a − mean)² + n·mean², two terms >= 0, so nothing
//    cancels): within kReferenceRelativeError of Σ a_i² for sumsq (its own
//    magnitude), of the rms for rms. Integer dtypes: from the exact Σa²
//    (RangeSummary::exact_sumsq): sumsq is that integer (is_integer) when it
//    is below 2^127, else its long double; rms is sqrt of it over count.
//  - moment moments com spread polyfit are NaN (every entry) whenever the
//    range holds a non-finite value that is not skipped; skipna skips NaN
//    cells (they weigh nothing) except for polyfit, whose normal equations
//    assume every cell of the range: any NaN or infinity makes it NaN.
// Errors that do not depend on the data (an order above J, an empty range,
// too few cells for a degree or ddof) come first, whatever the values.
Result<StatAnswer> ComputeStat(Stat stat, const StatParams& params, const RangeSummary& range, uint64_t p, DType dtype);

// The statistics a range known only by its index moments can give (a buffer
// that keeps no value moments, extremes or exact sums, such as Ola's):
// sum (= M_0), count, mean (= M_0 / count), moment, moments, com, spread and
// polyfit, by the same algebra as ComputeStat. `index` holds M_j about p over
// [p, q) with count q − p, every cell finite. var, std, sumsq, rms, min and max give
// InvalidArgument (the caller says which buffer would serve them); so do the
// errors ComputeStat gives (empty range, order or degree above the tuple's).
bool ServedByIndexMoments(Stat stat);
Result<StatAnswer> ComputeIndexStat(Stat stat, const StatParams& params, const IndexMoments& index, uint64_t p);

// Exact decimal text of a 128-bit integer.
std::string Int128ToString(Int128 v);

}  // namespace momenta
