#include "stream/window/arrival_hold.h"

#include <cassert>

namespace momenta {

bool ArrivalHold::Add(int64_t ts, int64_t item) {
  if ((taken_ && ts <= *taken_) || (clock_ && ts < *clock_ - tardiness_)) {
    ++dropped_;
    return false;
  }
  Advance(ts);
  by_stamp_[ts].push_back(item);
  ++held_;
  return true;
}

void ArrivalHold::Advance(int64_t now) {
  if (!clock_ || now > *clock_) clock_ = now;
}

std::optional<int64_t> ArrivalHold::Complete() const {
  if (!clock_) return std::nullopt;
  return *clock_ - tardiness_ - 1;
}

std::vector<Arrival> ArrivalHold::Take(int64_t upto) {
  assert(clock_ && upto <= *clock_);
  assert(!taken_ || upto >= *taken_);
  std::vector<Arrival> out;
  auto end = by_stamp_.upper_bound(upto);
  for (auto it = by_stamp_.begin(); it != end; ++it)
    for (int64_t item : it->second) out.push_back({it->first, item});
  by_stamp_.erase(by_stamp_.begin(), end);
  held_ -= out.size();
  taken_ = upto;
  return out;
}

}  // namespace momenta
