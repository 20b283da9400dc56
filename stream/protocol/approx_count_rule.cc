#include "stream/protocol/approx_count_rule.h"

#include <algorithm>
#include <cmath>

namespace momenta {

namespace {

Message AcMessage(MessageType type, uint32_t site, int64_t tick, int64_t item, uint64_t half_units) {
  Message m;
  m.type = type;
  m.site = site;
  m.tick = tick;
  m.item = item;
  m.count = half_units;
  return m;
}

}  // namespace

void ApproxCountSite::CheckItem(const ItemCounts& items, int64_t item, double S, uint32_t site, int64_t tick,
                                std::vector<Message>* out) {
  const double e = items.Estimate(item);
  const uint64_t half = static_cast<uint64_t>(std::llround(2 * e));
  auto it = on_.find(item);
  if (it != on_.end()) {
    if (e <= kOff * alpha_ * S) {
      out->push_back(AcMessage(MessageType::kAcOff, site, tick, item, 0));
      on_.erase(it);
    } else if (std::abs(e - 0.5 * static_cast<double>(it->second)) > kDrift * alpha_ * S) {
      out->push_back(AcMessage(MessageType::kAcSet, site, tick, item, half));
      it->second = half;
    }
  } else if (e > kOn * alpha_ * S) {
    out->push_back(AcMessage(MessageType::kAcSet, site, tick, item, half));
    on_[item] = half;
  }
}

void ApproxCountSite::Check(ItemCounts& items, uint32_t site, int64_t tick, std::vector<Message>* out) {
  const double S = items.Count(), shift = items.SharedTerm();
  if (items.DrainTouched(&look_, &fell_)) {
    for (const auto& [j, r] : on_) look_.push_back(j);  // too many fell to list: every ON item
  } else {
    for (int64_t j : fell_)
      if (on_.count(j)) look_.push_back(j);
  }
  const bool scan = scan_count_ < 0 || S > (1 + kScanRatio) * scan_count_ || S < scan_count_ / (1 + kScanRatio) ||
                    std::abs(shift - scan_shift_) > kScanShift * alpha_ * S;
  if (scan) {
    items.ForEachCandidate([&](int64_t j) { look_.push_back(j); });
    for (const auto& [j, r] : on_) look_.push_back(j);
    scan_count_ = S;
    scan_shift_ = shift;
  }
  if (look_.size() > 1) {
    std::sort(look_.begin(), look_.end());
    look_.erase(std::unique(look_.begin(), look_.end()), look_.end());
  }
  for (int64_t j : look_) CheckItem(items, j, S, site, tick, out);
}

}  // namespace momenta
