#include "stream/net/wire_meter.h"

#include <algorithm>

namespace momenta {

void WireMeter::CountBatch(int64_t clock, const TrafficCounts& c) {
  total_ += c;
  const int64_t width = std::max<int64_t>(1, window_ / 1024);
  const int64_t slice = clock >= 0 ? clock / width * width : -((-clock + width - 1) / width * width);
  if (slices_.empty() || slices_.back().first != slice) {
    slices_.emplace_back(slice, c);
  } else {
    slices_.back().second += c;
  }
  window_sum_ += c;
  while (!slices_.empty() && slices_.front().first + width - 1 <= clock - window_) {
    window_sum_ -= slices_.front().second;
    slices_.pop_front();
  }
}

void WireMeter::CountSnapshot(int64_t clock, const TrafficCounts& c) {
  slices_.clear();
  window_sum_ = {};
  snapshots_ += c;
  CountBatch(clock, c);
}

}  // namespace momenta
