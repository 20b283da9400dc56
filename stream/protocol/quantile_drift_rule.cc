#include "stream/protocol/quantile_drift_rule.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <optional>

namespace momenta {

namespace {
Message Make(MessageType type, uint32_t site, int64_t tick) {
  Message m;
  m.type = type;
  m.site = site;
  m.tick = tick;
  return m;
}

// A value strictly inside (lower, upper) whose estimated rank is nearest the
// target from above; nullopt when the snapshot has none there. `lower` is
// exclusive unless has_lower is false (the open bottom step).
std::optional<int64_t> SplitPoint(const RankSnapshot& snap, bool has_lower, int64_t lower, bool has_upper,
                                  int64_t upper, double target) {
  const auto& v = snap.values();
  auto first = has_lower ? std::upper_bound(v.begin(), v.end(), lower) : v.begin();
  auto last = has_upper ? std::lower_bound(v.begin(), v.end(), upper) : v.end();
  if (first == last) return std::nullopt;
  auto it = std::lower_bound(first, last, target, [&](int64_t value, double t) { return snap.Rank(value) < t; });
  if (it == last) --it;
  return *it;
}
}  // namespace

uint64_t QuantileDriftSite::Quantize(double rank) const {
  if (N_ == 0) return 0;
  const double q = std::round(rank / static_cast<double>(N_) * static_cast<double>(kOne));
  return static_cast<uint64_t>(std::clamp(q, 0.0, static_cast<double>(kOne)));
}

void QuantileDriftSite::Split(const RankSnapshot& snap, double split, std::vector<Step>* steps,
                              double* below_hi) const {
  // The open step below the first boundary (level 0): cut from the top down
  // until what stays below the lowest cut is narrow enough.
  std::vector<Step> all;
  {
    std::optional<int64_t> upper;
    if (!steps->empty()) upper = steps->front().value;
    double hi = *below_hi;
    while (hi > split) {
      auto u = SplitPoint(snap, false, 0, upper.has_value(), upper.value_or(0), hi / 2);
      if (!u) break;
      all.insert(all.begin(), Step{*u, 0, snap.Rank(*u), 0, true});
      upper = *u;
      hi = snap.RankBelow(*u);
    }
    *below_hi = hi;
  }
  all.insert(all.end(), steps->begin(), steps->end());
  for (size_t i = 0; i < all.size(); ++i)
    all[i].hi = i + 1 < all.size() ? snap.RankBelow(all[i + 1].value) : snap.total();
  // Every step wider than `split`: cut at its rank midpoint, left to right.
  std::vector<Step> done;
  for (size_t i = 0; i < all.size(); ++i) {
    const bool has_upper = i + 1 < all.size();
    const int64_t upper = has_upper ? all[i + 1].value : 0;
    std::vector<Step> pieces{all[i]};
    for (size_t p = 0; p < pieces.size();) {
      const Step s = pieces[p];
      const bool up = p + 1 < pieces.size() || has_upper;
      const int64_t up_value = p + 1 < pieces.size() ? pieces[p + 1].value : upper;
      if (s.hi - s.lo > split) {
        if (auto u = SplitPoint(snap, true, s.value, up, up_value, (s.lo + s.hi) / 2)) {
          Step left = s;
          left.hi = snap.RankBelow(*u);
          left.fresh = true;
          pieces[p] = left;
          pieces.insert(pieces.begin() + static_cast<ptrdiff_t>(p) + 1, Step{*u, 0, snap.Rank(*u), s.hi, true});
          continue;  // look at the left piece again
        }
      }
      ++p;
    }
    done.insert(done.end(), pieces.begin(), pieces.end());
  }
  steps->swap(done);
}

void QuantileDriftSite::Check(const WindowQuantiles& q, const WindowCount& count, uint64_t arrivals, uint32_t site,
                              int64_t tick, std::vector<Message>* out) {
  // Expiries are not seen one by one; this tick's are estimated from the
  // count: max(0, S_prev + arrivals − S), S_prev the previous tick's estimate.
  // A check is due when
  //   changes = Σ_ticks (arrivals + max(0, S_prev + arrivals − S)) since the last check
  //           >= 0.1·eps·max(S_last_check, 1)   (and changes > 0),
  // S_last_check the estimate at the last check; the first check comes at S > 0.
  const double S = count.Estimate();
  changes_ += static_cast<double>(arrivals) + std::max(0.0, previous_ + static_cast<double>(arrivals) - S);
  previous_ = S;
  const bool due = started_ ? changes_ >= kCheck * eps_ * std::max(check_count_, 1.0) && (changes_ > 0) : S > 0;
  if (!due) return;
  started_ = true;
  changes_ = 0;
  check_count_ = S;
  ++checks_;
  // COUNT(N = round(S)) when |S − N| > 0.03·eps·S, or when S rounds to 0 and N is not 0.
  const uint64_t n = static_cast<uint64_t>(std::llround(S));
  if (std::abs(S - static_cast<double>(N_)) > kCountReport * eps_ * S || (n == 0 && N_ != 0)) {
    N_ = n;
    Message m = Make(MessageType::kQCount, site, tick);
    m.count = N_;
    out->push_back(std::move(m));
  }
  if (N_ == 0) return;  // every level is 0 and so is the window, to within the count's error
  const RankSnapshot snap = q.Snapshot();
  const double allow = kAllow * eps_ * S, split = kSplit * eps_ * S, merge = kMerge * eps_ * S;

  // Current steps with their estimated rank ranges.
  std::vector<Step> steps;
  for (const auto& [v, level] : bounds_) steps.push_back({v, level, snap.Rank(v), 0, false});
  for (size_t i = 0; i < steps.size(); ++i)
    steps[i].hi = i + 1 < steps.size() ? snap.RankBelow(steps[i + 1].value) : snap.total();
  double below_hi = steps.empty() ? snap.total() : snap.RankBelow(steps.front().value);

  // Merge narrow neighbors: drop boundary i when step i-1 and step i
  // together are narrower than `merge` (the bottom step counts from rank 0).
  std::vector<int64_t> dropped;
  {
    std::vector<Step> kept;
    for (Step& s : steps) {
      const double prev_lo = kept.empty() ? 0 : kept.back().lo;
      if (s.hi - prev_lo <= merge) {
        dropped.push_back(s.value);
        if (kept.empty()) {
          below_hi = s.hi;
        } else {
          kept.back().hi = s.hi;
        }
        continue;
      }
      kept.push_back(s);
    }
    steps.swap(kept);
  }
  Split(snap, split, &steps, &below_hi);

  for (int64_t v : dropped) {
    bounds_.erase(v);
    Message m = Make(MessageType::kQDrop, site, tick);
    m.item = v;
    out->push_back(std::move(m));
  }
  for (Step& s : steps) {
    const double level = Level(s.level);
    const double error = std::max(std::abs(level - s.lo), std::abs(level - s.hi));
    if (!s.fresh && error <= allow && bounds_.count(s.value)) continue;
    const uint64_t qlevel = Quantize((s.lo + s.hi) / 2);
    auto it = bounds_.find(s.value);
    if (it != bounds_.end() && it->second == qlevel) continue;
    bounds_[s.value] = qlevel;
    Message m = Make(MessageType::kQLevel, site, tick);
    m.item = s.value;
    m.count = qlevel;
    out->push_back(std::move(m));
  }
}

void DriftSteps::Apply(const Message& m) {
  switch (m.type) {
    case MessageType::kQCount:
      N_ = m.count;
      break;
    case MessageType::kQLevel:
      bounds_[m.item] = m.count;
      break;
    case MessageType::kQDrop:
      bounds_.erase(m.item);
      break;
    default:
      assert(false && "not a drift-rule message");
  }
  dirty_ = true;
}

const RankSteps& DriftSteps::steps() {
  if (dirty_) {
    steps_.values.clear();
    steps_.levels.clear();
    for (const auto& [v, level] : bounds_) {
      steps_.values.push_back(v);
      steps_.levels.push_back(static_cast<double>(level) * static_cast<double>(N_) /
                              static_cast<double>(QuantileDriftSite::kOne));
    }
    steps_.count = static_cast<double>(N_);
    dirty_ = false;
  }
  return steps_;
}

}  // namespace momenta
