// The many-range forms of `momenta query`: --ranges (one range per line of
// a file or a pipe, answered in input order, each batch of lines that is
// ready read at depth) and --bins (an overview: [P, Q) in K equal bins).
// Both end with one line on stderr: how many ranges, the bytes of the array
// they cover, and what was read — the bytes asked of the devices once a
// batch's overlapping and touching reads were merged (never more than the
// reads a batch needs; adjacent bins read their shared leaf once). With
// json that line is one object: {"ranges"|"bins":N, "skipped":S (if any),
// "elapsed_us", "covered_bytes", "array_bytes_read", "tier_bytes_read",
// "read_requests", with --snap "edges_moved", "leaf"}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"

namespace momenta::cli {

// What every range of the command is asked.
struct QuerySpec {
  std::string path;         // the array, for messages
  std::vector<Stat> stats;  // --stat (a line's "stat" field replaces them)
  StatParams params;
  bool json = false;
};

// Answers each line of `input` ("-": stdin; tools/range_lines.h says what a
// line holds), one answer line per range in input order: "P:Q sum 10 mean
// 2.5" or, with json, {"line":N,"range":[P,Q],"stats":{...}}. Lines are
// answered as soon as no further line is ready (a pipe gets each answer
// before it writes the next line), at most 256 per batch, and stdout is
// flushed after each batch. A line that fails (malformed, outside the array,
// a statistic the range cannot give) names its line: with skip_errors its
// answer is "error: <message>" ({"line":N,"error":"..."}) and the exit code
// is 1 at the end; without, the lines before it are answered and the command
// stops there (exit 2 for malformed text, else 1). Returns the exit code.
int AnswerRangeLines(BufferedArray& ba, const QuerySpec& spec, const std::string& input, bool skip_errors);

// The `bins` bins of `range`: bin i is [P + ⌊i·(Q−P)/K⌋, P + ⌊(i+1)·(Q−P)/K⌋).
// REQUIRES: 1 <= bins <= range.size()
std::vector<IndexRange> EqualBins(IndexRange range, uint64_t bins);
// Each edge moved to the nearest leaf boundary (a multiple of leaf_span, or
// the array's end; ties go down): every bin is then whole leaves and no raw
// element is read. Bins may become empty. *moved receives the largest move.
std::vector<IndexRange> SnapBins(const std::vector<IndexRange>& bins, uint64_t leaf_span, uint64_t length,
                                 uint64_t* moved);

// Bins of `size` elements from range.begin, the last one shorter when `size`
// does not divide the range's size. REQUIRES: size >= 1, range not empty
std::vector<IndexRange> SizedBins(IndexRange range, uint64_t size);

// Answers the bins of `range` (`bins` equal ones, or of `bin_size` elements
// when that is not 0; snapped when `snap`), one line per bin:
// "lo:hi mean 1 min 0 max 3" or {"range":[lo,hi],"stats":{...}} (with snap,
// also "asked":[lo,hi], the bin before snapping). A statistic an empty bin
// cannot give (the mean of nothing) is NaN there. bins > Q - P is refused, and
// --bin-size over an empty range. Returns the exit code.
int AnswerBins(BufferedArray& ba, const QuerySpec& spec, IndexRange range, uint64_t bins, uint64_t bin_size, bool snap);

}  // namespace momenta::cli
