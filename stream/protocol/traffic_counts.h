// TrafficCounts: what a protocol sent, in the units the bounds and the
// tables are stated in. One struct for the simulator's meter (comm_meter.h:
// messages, words, bits, each message's encoded bytes; no frames) and for
// the wire (the root's and the site client's counters: whole frames, their
// bytes header included, the messages and words they carried; no bits).
// A unit a counter does not measure stays 0.
#pragma once

#include <cstdint>

namespace momenta {

struct TrafficCounts {
  uint64_t frames = 0;    // wire frames
  uint64_t messages = 0;  // protocol messages
  uint64_t words = 0;     // MessageWords of those messages
  uint64_t bits = 0;      // MessageBits of those messages
  uint64_t bytes = 0;     // on the wire: frame bytes; in the simulator: encoded message bytes
  TrafficCounts& operator+=(const TrafficCounts& o);
  // REQUIRES: every count of o <= this one's
  TrafficCounts& operator-=(const TrafficCounts& o);
};

}  // namespace momenta
