// The rows of `momenta import`'s text/CSV input, read as numpy.loadtxt reads
// a table: every line that holds values is one row (blank lines and '#'
// comments are none), its values the tokens ForEachTextValue
// (tools/text_values.h) finds on it, and every row has the same number of
// values K. The table imports as shape (N, K); as (N,) when K is 1 or one
// column is taken (--column); as (K,) when there is one row (numpy.loadtxt's
// squeeze). A header line is skipped: the lines --skip-rows names, and a
// first row in which no token is a number (detected, and said so by the
// caller). Pure: no I/O (a stop signal is checked every 65536 lines); in
// momenta_cli_parse.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta::cli {

struct TextTableOptions {
  uint64_t skip_rows = 0;  // --skip-rows: the first lines, whatever they hold
  std::string column;      // --column: "" (every column), an index J from 0 (-1: the last), or a header name
};

// What the first pass found.
struct TextTable {
  uint64_t rows = 0;
  uint64_t columns = 0;            // values per row (0 when there is no row)
  std::optional<uint64_t> pick;    // the one column taken (--column), from 0
  uint64_t first_line = 1;         // rows are on this line and after (from 1)
  uint64_t header_line = 0;        // the header's line (0: none): detected or the last skipped
  bool header_detected = false;    // found by its content, not skipped by --skip-rows
  std::vector<std::string> names;  // the header's names (blanks and "quotes" trimmed)
  // (rows,) with one column or a pick; (columns,) with one row; else (rows, columns).
  std::vector<uint64_t> Shape() const;
};

// The names of a header line: split at ',', ';' and tabs when it holds one
// (so "time (s),value" is two names), else at blanks; a '#' comment is cut.
std::vector<std::string> SplitHeader(std::string_view line);

// The first pass over `text` (named `name` in errors): every imported value
// is checked to parse as `dtype` ("<name>: line N: <ParseValue's error>"),
// every row to hold as many values as the first ("<name>: line 5 has 3
// values, but the rows before it have 2"), --column to name a column.
Result<TextTable> ScanTextTable(std::string_view text, DType dtype, const std::string& name,
                                const TextTableOptions& opts);

// The second pass: fn(token, line) for every value `table` imports, in C
// order; stops at fn's first error. REQUIRES: `table` is ScanTextTable's
// answer for this same `text`. A stop signal ends it with Interrupted.
Status ForEachTableValue(std::string_view text, const TextTable& table, const std::string& name,
                         const std::function<Status(std::string_view, uint64_t)>& fn);

}  // namespace momenta::cli
