// Approximate counting with small items turned off, site side (Chan, Lam, Lee
// & Ting; stream/REFERENCE.md §3.2; thresholds [R], chosen here and proved by the
// stream tests).
//
// Guarantee: the root's value r_j for this site (0 for an item it never
// heard of or heard OFF for) satisfies |r_j - c_j| <= alpha * c at every tick,
// c being the site's window count. The site keeps ItemCounts at
// item_eps = beta = 0.35 alpha (owned by the caller, touch tracking on) and,
// with S its count estimate and e_j an item's estimate:
//   ON item:   e_j <= alpha/4 * S           -> OFF(j)
//              |e_j - r_j| > alpha/2 * S    -> SET(j, e_j)
//   other:     e_j >  alpha/2 * S           -> SET(j, e_j), now ON
// Each tick looks at the items that arrived and at the ON items whose
// estimate fell (ItemCounts::DrainTouched; every ON item when more fell than
// it lists); a fall cannot turn an item on.
// Every candidate is looked at again when S has moved by 3% or the shared
// term of the estimates (ItemCounts::SharedTerm) by 0.04 alpha S since the
// last such scan. An item last looked at after the scan has seen S and the
// shared term move at most twice that since: its thresholds widen from
// 0.5 alpha S to at most (0.5 * 1.03^2 + 0.08 * 1.03) alpha S = 0.613 alpha S,
// so errors stay below (0.613 + 0.35) alpha c (plus S's own error, 0.18 alpha
// of it) < alpha c. ON holds O(1/alpha) items; each message
// needs an alpha/4 share of the window to change, so the cost does not
// depend on how many distinct items there are.
// SET carries the estimate in half units (estimates are multiples of 1/2).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "stream/protocol/messages.h"
#include "stream/window/item_counts.h"

namespace momenta {

class ApproxCountSite {
 public:
  // REQUIRES: 0 < alpha < 1
  explicit ApproxCountSite(double alpha) : alpha_(alpha) {}

  // The ItemCounts item_eps this rule assumes.
  double synopsis_eps() const { return kBeta * alpha_; }
  // After the tick's arrivals: appends this tick's SET/OFF messages.
  // REQUIRES: items.TrackTouched(true) since the start
  void Check(ItemCounts& items, uint32_t site, int64_t tick, std::vector<Message>* out);

  double alpha() const { return alpha_; }
  size_t on_count() const { return on_.size(); }
  // The value the root holds for item (half units; 0 when off).
  uint64_t reported(int64_t item) const {
    auto it = on_.find(item);
    return it == on_.end() ? 0 : it->second;
  }

  static constexpr double kBeta = 0.35, kOn = 0.5, kOff = 0.25, kDrift = 0.5;
  static constexpr double kScanRatio = 0.03, kScanShift = 0.04;

 private:
  void CheckItem(const ItemCounts& items, int64_t item, double S, uint32_t site, int64_t tick,
                 std::vector<Message>* out);

  double alpha_;
  std::unordered_map<int64_t, uint64_t> on_;  // ON items -> reported half units (> 0)
  double scan_count_ = -1;                    // S at the last full scan (-1: none yet)
  double scan_shift_ = 0;                     // items.SharedTerm() then
  std::vector<int64_t> look_, fell_;
};

}  // namespace momenta
