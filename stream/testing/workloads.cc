#include "stream/testing/workloads.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

namespace momenta {

namespace {

// Zipf(s) over ranks 0..n-1 by inverse CDF, mapped to scattered item ids.
class Zipf {
 public:
  Zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = (sum += 1 / std::pow(static_cast<double>(i + 1), s));
    for (double& c : cdf_) c /= sum;
  }
  template <class Rng>
  int64_t operator()(Rng& rng) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const size_t r = static_cast<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
    return Scatter(static_cast<int64_t>(std::min(r, cdf_.size() - 1)));
  }
  static int64_t Scatter(int64_t rank) { return (rank * 7919 + 13) % 1000003; }

 private:
  std::vector<double> cdf_;
};

class Base : public Workload {
 public:
  explicit Base(const WorkloadParams& p) : p_(p), rng_(p.seed), zipf_(1000, 1.1) {}

 protected:
  int64_t W() const { return p_.spec.window; }
  uint64_t Poisson(double mean) {
    if (mean <= 0) return 0;
    return std::poisson_distribution<uint64_t>(mean)(rng_);
  }
  void Emit(int64_t t, uint64_t n, std::vector<Arrival>* out) {
    for (uint64_t i = 0; i < n; ++i) out->push_back({t, zipf_(rng_)});
  }
  double alpha() const { return 11 * p_.eps / 24; }  // the AC threshold of frequent items

  WorkloadParams p_;
  std::mt19937_64 rng_;
  Zipf zipf_;
};

struct Steady : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override { Emit(t, Poisson(p_.rate), out); }
};

// W2: one burst per site at W/2, silence before and after.
struct Burst : Base {
  using Base::Base;
  void Arrivals(int64_t t, int site, std::vector<Arrival>* out) override {
    if (t == W() / 2 + site) Emit(t, static_cast<uint64_t>(p_.rate * static_cast<double>(W())), out);
  }
};

// W3: bursts on a tenth of a window, then silence while they all expire.
struct ExpiryStorm : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    const int64_t start = W() / 3, len = std::max<int64_t>(1, W() / 10);
    if (t >= start && t < start + len) Emit(t, Poisson(p_.rate * 10), out);
    if (t >= 3 * W() && t < 3 * W() + len) Emit(t, Poisson(p_.rate * 10), out);
  }
};

// W4: high rate for W/2 ticks, nothing for W/2.
struct Square : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    if ((t / std::max<int64_t>(1, W() / 2)) % 2 == 0) Emit(t, Poisson(p_.rate * 2), out);
  }
};

// W5: each site's count alternates between G and G+1 after warming up, where
// G sits on the basic-counting grid; arrivals replace expiries one for one.
struct HoverCount : Base {
  explicit HoverCount(const WorkloadParams& p) : Base(p), live_(p.sites) {}
  void Arrivals(int64_t t, int site, std::vector<Arrival>* out) override {
    auto& live = live_[site];  // (ts, count) arrived, still in the window
    uint64_t n = 0;
    while (!live.empty() && live.front().first <= t - W()) live.pop_front();
    for (const auto& [ts, c] : live) n += c;
    // A target that grows in steps so several grid levels get hovered over.
    const uint64_t base = static_cast<uint64_t>(std::max(4.0, 24 / p_.eps));
    const uint64_t target = base * (1 + static_cast<uint64_t>(t / (3 * W()))) + static_cast<uint64_t>(t % 2);
    const uint64_t per_tick = std::max<uint64_t>(1, target / static_cast<uint64_t>(W()) + 1);
    const uint64_t add = n < target ? std::min(target - n, 4 * per_tick) : 0;
    Emit(t, add, out);
    if (add) live.push_back({t, add});
  }
  std::vector<std::deque<std::pair<int64_t, uint64_t>>> live_;
};

// W6: ~1.5/alpha items at alpha/8 share each, the rest filler (fresh ids);
// after 1.5 W the filler stops and the small items make up everything.
struct SmallRising : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    const int64_t smalls = std::max<int64_t>(2, static_cast<int64_t>(std::ceil(1.5 / alpha())));
    const double each = std::max(1.0, p_.rate) * alpha() / 8;
    for (int64_t i = 0; i < smalls; ++i)
      for (uint64_t c = Poisson(each); c > 0; --c) out->push_back({t, 5000000 + i});
    if (t < 3 * W() / 2) {
      const uint64_t filler = Poisson(p_.rate * (1 - static_cast<double>(smalls) * alpha() / 8));
      for (uint64_t i = 0; i < filler; ++i) out->push_back({t, 9000000 + next_++});
    }
  }
  int64_t next_ = 0;
};

// W7: item X at a fixed rate; the other items' rate swings so X's share
// crosses alpha/4 and alpha/2 back and forth (period W/2).
struct HoverAc : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    const double x_rate = std::max(0.5, p_.rate * alpha() / 3);
    const double phase = std::sin(2 * M_PI * static_cast<double>(t) / std::max<double>(2, W() / 2.0));
    const double share = alpha() * (0.375 + 0.3 * phase);  // between alpha/13 and 0.675 alpha
    const double others = x_rate * (1 - share) / share;
    for (uint64_t c = Poisson(x_rate); c > 0; --c) out->push_back({t, 424242});
    for (uint64_t c = Poisson(others); c > 0; --c) out->push_back({t, 100 + static_cast<int64_t>(rng_() % 64)});
  }
};

// W8: the heavy hitter (30% of arrivals) changes every W/3 ticks.
struct Rotation : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    const int64_t heavy = 7000000 + t / std::max<int64_t>(1, W() / 3);
    for (uint64_t c = Poisson(p_.rate); c > 0; --c)
      out->push_back({t, std::uniform_real_distribution<double>(0, 1)(rng_) < 0.3 ? heavy : zipf_(rng_)});
  }
};

// W9: all traffic at site 0 for 2W ticks, then all at the last site.
struct Imbalance : Base {
  using Base::Base;
  void Arrivals(int64_t t, int site, std::vector<Arrival>* out) override {
    const int busy = (t / (2 * W())) % 2 == 0 ? 0 : p_.sites - 1;
    if (site == busy) Emit(t, Poisson(p_.rate * p_.sites), out);
  }
};

// W10: every item new.
struct Distinct : Base {
  using Base::Base;
  void Arrivals(int64_t t, int site, std::vector<Arrival>* out) override {
    for (uint64_t c = Poisson(p_.rate); c > 0; --c) out->push_back({t, (next_++ << 8) + site});
  }
  int64_t next_ = 0;
};

// W11: quantile orders.
struct Ordered : Base {
  Ordered(const WorkloadParams& p, int kind) : Base(p), kind_(kind) {}
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    for (uint64_t c = Poisson(p_.rate); c > 0; --c) {
      const int64_t k = next_++;
      int64_t v = 0;
      switch (kind_) {
        case 0:
          v = k;
          break;  // increasing
        case 1:
          v = -k;
          break;  // decreasing
        case 2:
          v = (k % 2 == 0) ? -1000000000 - k : 1000000000 + k;
          break;  // alternating extremes
        case 3:
          v = static_cast<int64_t>(rng_() % 4) * 1000;
          break;  // heavy duplicates
        default:
          v = 77;
          break;  // all equal
      }
      out->push_back({t, v});
    }
  }
  int kind_;
  int64_t next_ = 0;
};

// W12: out of order, delay uniform in [0, tau] or exactly tau (plus some
// items later still, which must be dropped).
struct Late : Base {
  Late(const WorkloadParams& p, bool exact) : Base(p), exact_(exact) {}
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    const int64_t tau = p_.spec.tardiness;
    for (uint64_t c = Poisson(p_.rate); c > 0; --c) {
      int64_t delay = exact_ ? tau : static_cast<int64_t>(rng_() % static_cast<uint64_t>(tau + 1));
      if (rng_() % 50 == 0) delay = tau + 1 + static_cast<int64_t>(rng_() % 3);  // too late
      out->push_back({t - delay, zipf_(rng_)});
    }
  }
  bool exact_;
};

// W13: bursts of activity separated by idle stretches longer than W.
struct Idle : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    if (t % (3 * W()) < W() / 4 + 1) Emit(t, Poisson(p_.rate), out);
  }
};

// One item takes 90% of the traffic.
struct Giant : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    for (uint64_t c = Poisson(p_.rate); c > 0; --c) out->push_back({t, rng_() % 10 != 0 ? 31337 : zipf_(rng_)});
  }
};

// Uniform over [0, 2^40).
struct Noise : Base {
  using Base::Base;
  void Arrivals(int64_t t, int, std::vector<Arrival>* out) override {
    for (uint64_t c = Poisson(p_.rate); c > 0; --c) out->push_back({t, static_cast<int64_t>(rng_() >> 24)});
  }
};

}  // namespace

const std::vector<std::string>& WorkloadNames() {
  static const std::vector<std::string> names = {
      "steady",    "burst",        "expiry_storm", "square",     "hover_count", "small_rising", "hover_ac",
      "rotation",  "imbalance",    "distinct",     "increasing", "decreasing",  "alternating",  "duplicates",
      "all_equal", "late_uniform", "late_exact",   "idle",       "giant",       "noise"};
  return names;
}

std::unique_ptr<Workload> MakeWorkload(std::string_view name, const WorkloadParams& p) {
  if (name == "steady") return std::make_unique<Steady>(p);
  if (name == "burst") return std::make_unique<Burst>(p);
  if (name == "expiry_storm") return std::make_unique<ExpiryStorm>(p);
  if (name == "square") return std::make_unique<Square>(p);
  if (name == "hover_count") return std::make_unique<HoverCount>(p);
  if (name == "small_rising") return std::make_unique<SmallRising>(p);
  if (name == "hover_ac") return std::make_unique<HoverAc>(p);
  if (name == "rotation") return std::make_unique<Rotation>(p);
  if (name == "imbalance") return std::make_unique<Imbalance>(p);
  if (name == "distinct") return std::make_unique<Distinct>(p);
  if (name == "increasing") return std::make_unique<Ordered>(p, 0);
  if (name == "decreasing") return std::make_unique<Ordered>(p, 1);
  if (name == "alternating") return std::make_unique<Ordered>(p, 2);
  if (name == "duplicates") return std::make_unique<Ordered>(p, 3);
  if (name == "all_equal") return std::make_unique<Ordered>(p, 4);
  if (name == "late_uniform") return std::make_unique<Late>(p, false);
  if (name == "late_exact") return std::make_unique<Late>(p, true);
  if (name == "idle") return std::make_unique<Idle>(p);
  if (name == "giant") return std::make_unique<Giant>(p);
  if (name == "noise") return std::make_unique<Noise>(p);
  return nullptr;
}

}  // namespace momenta
