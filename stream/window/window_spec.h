// WindowSpec: the time-based sliding window every synopsis and protocol in
// stream/ shares, and the clock semantics they all follow.
//
// Time is an integer count of units (milliseconds for the update log and live
// input; any unit for files and tests). At clock t the window holds every item
// that has ARRIVED by t and whose timestamp s lies in [t-W+1, t]; an item
// stamped s expires when the clock reaches s+W, whether or not anything else
// arrives. With tardiness tau an item stamped s may arrive until clock s+tau;
// one arriving later is refused and counted as dropped (a late item is never
// counted before it arrives). tau < W, so an accepted item is always inside
// the window when it arrives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

// Timestamps must lie in [-kMaxTime, kMaxTime] and W <= kMaxTime, so that
// clock arithmetic never overflows.
inline constexpr int64_t kMaxTime = int64_t{1} << 61;

struct WindowSpec {
  int64_t window = 1;     // W >= 1 time units
  int64_t tardiness = 0;  // tau, 0 <= tau < W

  bool operator==(const WindowSpec&) const = default;
};

// InvalidArgument ("Invalid argument: window: ...") unless 1 <= W <= kMaxTime
// and 0 <= tau < W.
Status ValidateWindowSpec(const WindowSpec& spec);
// The smallest eps any synopsis or protocol takes. The sizes derived from
// it (about 1/eps counters or sample entries, 64/eps entries a root mirrors)
// must stay far inside size_t: an eps of 1e-300 made them overflow on the
// cast from double (undefined behavior), found by the fuzz target
// `synopsis` in a decoded snapshot. A site runs synopses at down to eps/72,
// so a site's eps must be at least 72 times this.
inline constexpr double kMinEps = 1e-12;

// InvalidArgument ("Invalid argument: <context>: eps must lie in (0, 1), at
// least 1e-12, got ...") unless kMinEps <= eps < 1.
Status CheckEps(double eps, std::string_view context);

// One item as it arrives at a site: its timestamp and its key.
struct Arrival {
  int64_t ts = 0;
  int64_t item = 0;
};

// True when an item stamped `ts` arriving at clock `now` is accepted.
// REQUIRES: ts <= now
inline bool AcceptsArrival(const WindowSpec& spec, int64_t now, int64_t ts) { return ts >= now - spec.tardiness; }

}  // namespace momenta
