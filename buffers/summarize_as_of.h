// Range summaries of an array as it stood at a time of its update log.
//
// "As of T" is the array once every logged update stamped at or before T had
// been applied and none stamped after T: with the log's records in sequence
// order, the prefix up to the first record stamped after T. The summary of a
// range [p, q) as of T is rebuilt from the current state: the k elements of
// the range updated after T (by the records of the current state, up to the
// log sequence it reflects) are put back to their values at T — the old value
// of each one's first record after T — and everything else is read from the
// buffer as it is: the merge, in index order, of the summaries of the runs
// between those elements and of each element at its old value. Exact, with
// extremes; it costs a pass over the log and one more summary per such element.
//
// Refused (InvalidArgument, naming the log) where no state of the array is
// "as of T": a record stamped at or before T after one stamped later (times
// out of order), a log that no longer reaches back to T (older segments
// removed by retention, and its first record is after T), or records lost to
// damage. Writes not made through momenta are not in the log and are not undone.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/buffered_array.h"
#include "storage/util/status.h"

namespace momenta {

// The summaries of `ranges` as of log time `time` into *out, in order, with
// extremes when `need_extremes`. Same threads rule as SummarizeBatch; a
// writer updating the array meanwhile (another process) makes it retry, and
// after a few lost races fail with Interrupted.
// REQUIRES: every range inside the array (else OutOfRange)
[[nodiscard]] Status SummarizeAsOf(BufferedArray& array, std::span<const IndexRange> ranges, int64_t time,
                                   bool need_extremes, std::vector<RangeSummary>* out);

}  // namespace momenta
