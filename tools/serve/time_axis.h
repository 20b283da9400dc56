// The time axis of a served array: element i was sampled at start + i / rate
// seconds since the Unix epoch (UTC). Given on `momenta serve`'s command line
// (--rate [NAME=]HZ, --start [NAME=]TIME) and listed by GET /api/arrays so the
// explorer can label its x axis with times.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "storage/util/status.h"

namespace momenta::serve {

struct TimeAxis {
  double rate = 0;   // samples per second, finite and > 0
  double start = 0;  // seconds since 1970-01-01T00:00:00Z of element 0
};

// A rate in hertz: a finite number > 0 ("1000", "44.1e3").
Result<double> ParseRate(const std::string& text);

// An instant as seconds since the epoch: a number ("1767323045.5", may be
// negative) or an ISO-8601 UTC date-time "YYYY-MM-DDTHH:MM:SS[.fff...]Z"
// (or a date alone, "YYYY-MM-DD", its midnight). Kept as a double: about
// 0.2 µs of precision near today.
Result<double> ParseInstant(const std::string& text);

// The flags' values alone parsed (names not checked): so a bad value is
// reported before the arrays are opened (which may build their buffers).
Status CheckTimeAxisValues(const std::vector<std::string>& rates, const std::vector<std::string>& starts);

// The time axes of the arrays `names` from the flags' values. Each value is
// "NAME=VALUE" (that array) or "VALUE" (every array without its own). An array
// gets a time axis when it has both a rate and a start; one of the two without
// the other, an unknown NAME, a NAME given twice or a bad value is an
// InvalidArgument naming the flag.
Result<std::map<std::string, TimeAxis>> ResolveTimeAxes(const std::vector<std::string>& rates,
                                                        const std::vector<std::string>& starts,
                                                        const std::vector<std::string>& names);

}  // namespace momenta::serve
