#include "stream/testing/comm_meter.h"

#include <cassert>

namespace momenta {

CommMeter::Tick& CommMeter::At(int64_t t) {
  AdvanceTo(t);
  if (ticks_.empty() || ticks_.back().t != t) ticks_.push_back(Tick{t, {}, 0});
  return ticks_.back();
}

void CommMeter::Record(const Message& m) {
  TrafficCounts c;
  c.messages = 1;
  c.words = MessageWords(m);
  c.bits = MessageBits(m);
  c.bytes = EncodeMessage(m).size();
  const int p = static_cast<int>(ProtocolOf(m.type));
  At(m.tick).sent[p] += c;
  total_[p] += c;
  window_sum_[p] += c;
}

void CommMeter::Events(int64_t t, uint64_t n) {
  At(t).events += n;
  window_events_ += n;
  total_events_ += n;
}

void CommMeter::AdvanceTo(int64_t t) {
  assert(ticks_.empty() || t >= ticks_.back().t);
  while (!ticks_.empty() && ticks_.front().t <= t - window_) {
    for (int p = 0; p < kProtocols; ++p) window_sum_[p] -= ticks_.front().sent[p];
    window_events_ -= ticks_.front().events;
    ticks_.pop_front();
  }
}

}  // namespace momenta
