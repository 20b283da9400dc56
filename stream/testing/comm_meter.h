// CommMeter: communication per protocol, counted in messages, words, bits
// and encoded bytes, in total and over the sliding window of the last W
// ticks, beside N(t): the arrivals plus expiries in that window over all
// sites (the quantity the bounds are stated in). Bounds and ratios are the
// caller's to form from these counts.
#pragma once

#include <array>
#include <cstdint>
#include <deque>

#include "stream/protocol/messages.h"
#include "stream/protocol/traffic_counts.h"

namespace momenta {

class CommMeter {
 public:
  static constexpr int kProtocols = 4;
  explicit CommMeter(int64_t window) : window_(window) {}

  // A message sent at its tick. REQUIRES: m.tick >= the current tick
  void Record(const Message& m);
  // `n` arrivals or expiries (any site) at tick t. REQUIRES: t >= the current tick
  void Events(int64_t t, uint64_t n);
  // Slides the window so that it covers (t - W, t].
  void AdvanceTo(int64_t t);

  const TrafficCounts& total(Protocol p) const { return total_[static_cast<int>(p)]; }
  const TrafficCounts& window(Protocol p) const { return window_sum_[static_cast<int>(p)]; }
  uint64_t window_events() const { return window_events_; }
  uint64_t total_events() const { return total_events_; }

 private:
  struct Tick {
    int64_t t;
    std::array<TrafficCounts, kProtocols> sent;
    uint64_t events = 0;
  };
  Tick& At(int64_t t);

  const int64_t window_;
  std::deque<Tick> ticks_;  // the ticks of the window holding anything
  std::array<TrafficCounts, kProtocols> total_{}, window_sum_{};
  uint64_t window_events_ = 0, total_events_ = 0;
};

}  // namespace momenta
