// ArrivalHold: a site's arrivals held back until their time is complete, so
// that the clock a site reports is a time whose answer can no longer change.
//
// With tardiness tau an item stamped t may arrive until the clock reaches
// t + tau. The clock is the largest timestamp seen (a data clock) or the
// wall clock, moved on with Advance. Time T is complete once the clock has
// passed T + tau: every item stamped <= T that will ever be accepted is in.
// Complete() is that time, clock - tau - 1; the caller may also declare the
// whole clock complete (the input ended) by taking up to clock().
//
// Items are held with their stamps; Take(T) hands out those stamped <= T in
// stamp order and marks T taken. An item stamped at or before a time taken,
// or more than tau before the clock, is late: refused and counted.
// Memory: the items of the last tau + 1 time units (the protocol's synopses
// are not fed until then). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "stream/window/window_spec.h"

namespace momenta {

class ArrivalHold {
 public:
  // REQUIRES: tardiness >= 0
  explicit ArrivalHold(int64_t tardiness) : tardiness_(tardiness) {}

  // Holds (ts, item) and moves the clock to ts if later; false (dropped) when
  // it is late.
  bool Add(int64_t ts, int64_t item);
  // Moves the clock on to `now` (a bare timestamp, the wall clock); never back.
  void Advance(int64_t now);

  std::optional<int64_t> clock() const { return clock_; }
  // The latest complete time, clock - tau - 1; nullopt before any clock.
  std::optional<int64_t> Complete() const;
  // The last time taken (nullopt before the first Take).
  std::optional<int64_t> taken() const { return taken_; }

  // The items stamped <= upto, in stamp order (arrival order within a
  // stamp); from now on items stamped <= upto are late.
  // REQUIRES: upto <= clock(), and upto >= taken() if any
  std::vector<Arrival> Take(int64_t upto);

  size_t held() const { return held_; }
  uint64_t dropped() const { return dropped_; }

 private:
  const int64_t tardiness_;
  std::optional<int64_t> clock_;
  std::optional<int64_t> taken_;                      // items stamped <= taken_ were handed out
  std::map<int64_t, std::vector<int64_t>> by_stamp_;  // stamp -> items, all stamped > taken_
  size_t held_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace momenta
