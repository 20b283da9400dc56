#include "stream/protocol/traffic_counts.h"

namespace momenta {

TrafficCounts& TrafficCounts::operator+=(const TrafficCounts& o) {
  frames += o.frames;
  messages += o.messages;
  words += o.words;
  bits += o.bits;
  bytes += o.bytes;
  return *this;
}

TrafficCounts& TrafficCounts::operator-=(const TrafficCounts& o) {
  frames -= o.frames;
  messages -= o.messages;
  words -= o.words;
  bits -= o.bits;
  bytes -= o.bytes;
  return *this;
}

}  // namespace momenta
