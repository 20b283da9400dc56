// The statistics first and last: a range's first and last element (the M4
// lines of an overview, Jugel et al., VLDB 2014: a bin's first, last, min
// and max draw it exactly at one pixel per bin). No summary holds them, so
// they are read from the array: one element at each end of each range, all
// ranges' ends in one batch, elements that touch read as one request (the
// last of one bin and the first of the next are neighbours). Never a scan.
#pragma once

#include <span>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "storage/array/array_file.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

// A range's end elements; unset for an empty range.
struct RangeEnds {
  bool empty = true;
  Value first;
  Value last;
};

// Reads the ends of every range. *read (optional) is added the bytes and
// requests. The elements are read as they are now: a writer elsewhere may
// have changed them since the range's summary was taken.
// REQUIRES of every range: inside the array (else OutOfRange, nothing read).
[[nodiscard]] Status ReadRangeEnds(ArrayFile& array, std::span<const IndexRange> ranges, std::vector<RangeEnds>* out,
                                   QueryCost* read);

// first or last of a range whose ends are `ends`: the element's value, an
// integer dtype's exactly (is_integer). An empty range is InvalidArgument.
// REQUIRES: IsEndStat(stat)
Result<StatAnswer> EndAnswer(Stat stat, const RangeEnds& ends);

}  // namespace momenta
