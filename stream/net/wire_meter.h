// WireMeter: the traffic one site sent its root, as the root counts it:
// every frame in total (handshake and snapshots included), the snapshots'
// share of that, and the frames stamped in the site's last window
// (clock - W, clock]. The window is kept per slice of W/1024 time units, so
// a site sending a frame every time unit costs at most ~1024 entries, and is
// exact to within one slice. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "stream/protocol/traffic_counts.h"

namespace momenta {

class WireMeter {
 public:
  // REQUIRES: window >= 1 (W, the monitor's window)
  explicit WireMeter(int64_t window) : window_(window) {}

  // A frame that carries no state (the handshake): in total only.
  void CountFrame(const TrafficCounts& c) { total_ += c; }
  // A BATCH stamped with the site's clock. REQUIRES: clock >= the last one
  // since the last snapshot
  void CountBatch(int64_t clock, const TrafficCounts& c);
  // A SNAPSHOT stamped with the site's clock: a new clock line, so the
  // window restarts with it.
  void CountSnapshot(int64_t clock, const TrafficCounts& c);

  const TrafficCounts& total() const { return total_; }
  const TrafficCounts& snapshots() const { return snapshots_; }
  const TrafficCounts& window() const { return window_sum_; }

 private:
  int64_t window_;
  TrafficCounts total_;
  TrafficCounts snapshots_;
  TrafficCounts window_sum_;                              // the sum of slices_
  std::deque<std::pair<int64_t, TrafficCounts>> slices_;  // (slice start, its frames), oldest first
};

}  // namespace momenta
