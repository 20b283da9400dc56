// The CLI's parsers of option and argument text: counts, indices, ranges,
// finite numbers, byte sizes, durations, times in ms and fractions. Pure
// functions of their text (no I/O, no CLI11), in the library
// momenta_cli_parse that the CLI and the fuzz target `values` link.
// Every malformed text is InvalidArgument naming the option (a usage error);
// a well-formed range outside the array is OutOfRange (a runtime error).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "buffers/algebra/range_summary.h"  // IndexRange, RangeProblem
#include "storage/util/status.h"

namespace momenta::cli {

// A count like "1000", "2^40" or "3*2^20", at most 2^63. Anything else
// (empty, a sign, a fraction, an overflow) is InvalidArgument naming `what`
// (the option or argument, e.g. "--length").
Result<uint64_t> ParseCount(std::string_view text, std::string_view what = "count");

// An element index: a count form, or one after '-' (counted from the end
// by the caller): "7", "2^30", "-1", "-2^10". In [-2^63, 2^63). Empty text is
// InvalidArgument naming `what`, never index 0.
Result<int64_t> ParseIndex(std::string_view text, std::string_view what);

// A finite decimal number ("1.5", "-2e3"): infinity, NaN and values past the
// range of a double ("1e400") are InvalidArgument naming `what`.
Result<double> ParseFinite(std::string_view text, std::string_view what);

// A half-open range "P:Q" of an array of `length` elements, written like a
// NumPy slice: either side may be empty (0 / length), any ParseIndex form
// ("1000", "2^30", "-2^10"; negative counts from the end). Unlike a NumPy
// slice it is never clipped or emptied: a side past either end and P > Q are
// refused, as Python's ranges are (a statistic of a range other than the one
// asked would be a wrong answer given silently).
// Malformed text -> InvalidArgument (a usage error); P > Q or outside the
// array -> OutOfRange (a runtime error) saying which: "'500:100' is not a
// range of the array (length 1000): P > Q (500 > 100)". Errors name `what`
// (the flag, or a line of a file). REQUIRES: length <= 2^63 - 1
Result<IndexRange> ParseRange(std::string_view text, uint64_t length, std::string_view what = "--range");

// A size in bytes (--ram-budget, --log-segment, --data-size): "65536", "64K",
// "1M", "2G" (or lower case), "2^20", "3*2^20"; at most 2^63 bytes. Empty text
// is 0 (the default). Errors name `what`.
Result<uint64_t> ParseBytes(const std::string& text, std::string_view what = "--ram-budget");

// "5000", or with a unit for millisecond clocks: "250ms", "10s", "5m", "2h",
// "1d"; in [0, kMaxTime] ms after scaling (stream/window/window_spec.h), so it
// never overflows.
Result<int64_t> ParseDuration(const std::string& text, const char* flag);

// --time: a whole decimal int64 of ms, or kLogTimeNow (the wall clock) for
// empty text; kLogTimeNow itself (INT64_MIN) is refused.
Result<int64_t> ParseTimeFlag(const std::string& text);

// --since / --until: a whole decimal int64 of ms, or `dflt` for empty text.
Result<int64_t> ParseTimeMs(const std::string& text, int64_t dflt, const char* flag);

// --quantiles: comma-separated fractions in [0, 1] ("0.5,0.9,0.99"; strtod's
// forms). Empty text is no fraction; an empty part is refused.
Result<std::vector<double>> ParseFractions(const std::string& text);

}  // namespace momenta::cli
