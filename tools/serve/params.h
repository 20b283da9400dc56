// The query parameters of `momenta serve`'s requests: a request target split
// into its path segments and its query string, percent-decoded, and the
// typed values the API reads from them (ranges, statistics, counts), with the
// CLI's parsers (tools/cli_parse.h, buffers/statistics.h) so an option and a
// parameter of the same name take the same text and fail with the same
// message. Pure functions of their text: no I/O, no Beast; the fuzz target
// `params` (tests/fuzz/params_fuzz.cc) runs them on arbitrary bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "buffers/statistics.h"
#include "storage/status.h"

namespace momenta::serve {

// Limits on what a target may hold (a request past them is refused, 413).
inline constexpr size_t kMaxParams = 64;           // key=value pairs in a query string
inline constexpr size_t kMaxSegments = 16;         // path segments
inline constexpr size_t kMaxStatsPerRequest = 32;  // stat= parameters

struct Target {
  std::vector<std::string> segments;  // "/api/arrays/a%2Fb/stats" -> {"api", "arrays", "a/b", "stats"}
  std::vector<std::pair<std::string, std::string>> params;  // in order; "a&b=" -> {"a",""}, {"b",""}

  // The last value of `key`, or nullptr when absent.
  const std::string* Get(std::string_view key) const;
  // Every value of `key`, in order.
  std::vector<std::string> All(std::string_view key) const;
};

// Splits and decodes `target` ("/path?query"). '+' in the query is a space;
// "%XY" any byte (a decoded '/' stays inside its segment, so no name decoded
// from a segment reaches outside the served arrays). Empty segments are
// dropped ("//a/" is {"a"}). InvalidArgument for a bad escape ("%G1", "%2")
// or a target not starting with '/'; InvalidArgument too past the limits
// above, with *too_large (optional) set: the server answers that 413.
Result<Target> ParseTarget(std::string_view target, bool* too_large = nullptr);

// Decodes %XY escapes (and '+' as a space when `plus_is_space`).
Result<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// A boolean flag parameter: absent or "0"/"false" -> false; "" (present with
// no value), "1" or "true" -> true; anything else InvalidArgument.
Result<bool> GetFlag(const Target& t, std::string_view key);

// A count parameter (ParseCount's forms: "1000", "2^10") in [lo, hi]; `dflt`
// when absent. Errors name the parameter.
Result<uint64_t> GetCount(const Target& t, std::string_view key, uint64_t lo, uint64_t hi, uint64_t dflt);

// What a statistics request asks: stat=S (repeated), skipna, ddof, order,
// about, degree, as `momenta query` takes them.
struct StatRequest {
  std::vector<Stat> stats;
  StatParams params;
};
// `stats_required`: at least one stat= (else `dflt_stat`).
Result<StatRequest> GetStatRequest(const Target& t, bool stats_required, Stat dflt_stat = Stat::kSum);

}  // namespace momenta::serve
