// One line of `momenta query --ranges`: a range, and optionally the
// statistics that line asks for instead of the command's --stat.
//
//   P:Q                                       as --range (negative from the end)
//   {"range": [P, Q]}                         NDJSON: P, Q integers, or "P:Q"
//   {"range": "1000:2^30", "stat": "mean"}    "stat": a name or a list of names
//   {"range": [0, 10], "stat": ["mean", "var"]}
//
// Blank lines and lines starting with '#' hold no range.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "storage/util/status.h"

namespace momenta::cli {

struct RangeLine {
  bool blank = false;  // nothing to answer (blank or a comment)
  IndexRange range;
  std::optional<std::vector<Stat>> stats;  // the line's "stat" field, when it has one
};

// Malformed text -> InvalidArgument saying what is wrong; a range outside an
// array of `length` elements (or P > Q) -> OutOfRange. Errors name `where`
// ("ranges.txt:3").
Result<RangeLine> ParseRangeLine(std::string_view line, uint64_t length, const std::string& where);

}  // namespace momenta::cli
