#include "stream/testing/simulation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <unordered_set>

#include "stream/protocol/virtual_root.h"
#include "stream/testing/exact_window.h"
#include "stream/testing/workloads.h"

namespace momenta {

namespace {

class Checker {
 public:
  Checker(const SimulationOptions& o, SimulationReport* report)
      : o_(o), report_(report), global_(o.site.spec), rng_(o.seed ^ 0xc4ec) {
    for (uint32_t s = 0; s < o.sites; ++s) site_.emplace_back(o.site.spec);
  }
  void Advance(int64_t t) {
    global_.AdvanceTo(t);
    for (auto& w : site_) w.AdvanceTo(t);
  }
  void Add(uint32_t site, const Arrival& a) {
    global_.Add(a.ts, a.item);
    site_[site].Add(a.ts, a.item);
  }
  void Check(int64_t t, VirtualRoot& root);

 private:
  void Fail(int64_t t, const std::string& what) {
    if (report_->first_violations.size() < 10)
      report_->first_violations.push_back("tick " + std::to_string(t) + ": " + what);
    ++report_->violations;
  }

  const SimulationOptions& o_;
  SimulationReport* report_;
  ExactWindow global_;
  std::vector<ExactWindow> site_;
  std::mt19937_64 rng_;
};

void Checker::Check(int64_t t, VirtualRoot& root) {
  const double eps = o_.site.eps, c = static_cast<double>(global_.count());
  const double eps_b = BasicCountEps(eps), alpha = ApproxCountAlpha(eps);
  const SiteOptions& so = o_.site;
  if (so.basic_count) {
    if (std::abs(root.Count() - c) > eps_b * c)
      Fail(t, "count " + std::to_string(root.Count()) + " vs " + std::to_string(c));
    for (uint32_t s = 0; s < o_.sites; ++s) {
      const double cs = static_cast<double>(site_[s].count());
      if (std::abs(root.SiteCount(s) - cs) > eps_b * cs)
        Fail(t,
             "site " + std::to_string(s) + " count " + std::to_string(root.SiteCount(s)) + " vs " + std::to_string(cs));
    }
  }
  if (so.approx_count) {
    std::vector<int64_t> items;
    if (global_.counts().size() <= 1000) {
      for (const auto& [j, cj] : global_.counts()) items.push_back(j);
    } else {
      for (int i = 0; i < 1000; ++i) items.push_back(global_.AtRank(rng_() % global_.count()));
    }
    for (int i = 0; i < 3; ++i) items.push_back(static_cast<int64_t>(rng_()));
    for (const ItemEstimate& e : root.Frequent(std::min(1.0, eps / 2 + 1e-9 + 1e-6))) items.push_back(e.item);
    for (int64_t j : items) {
      const double cj = static_cast<double>(global_.Count(j));
      if (std::abs(root.ItemCount(j) - cj) > alpha * c + 1e-9)
        Fail(t, "item " + std::to_string(j) + " " + std::to_string(root.ItemCount(j)) + " vs " + std::to_string(cj) +
                    " (c=" + std::to_string(c) + ")");
      for (uint32_t s = 0; s < o_.sites; ++s) {
        const double cs = static_cast<double>(site_[s].count()), csj = static_cast<double>(site_[s].Count(j));
        if (std::abs(root.SiteItemCount(s, j) - csj) > alpha * cs + 1e-9)
          Fail(t, "site " + std::to_string(s) + " item " + std::to_string(j));
      }
    }
  }
  if (so.approx_count && so.basic_count) {
    for (double phi : {0.06, 0.1, 0.2, 0.5}) {
      if (phi <= eps / 2) continue;
      const auto freq = root.Frequent(phi);
      std::unordered_set<int64_t> in;
      for (const ItemEstimate& e : freq) {
        in.insert(e.item);
        if (static_cast<double>(global_.Count(e.item)) < (phi - eps) * c)
          Fail(t, "false frequent item " + std::to_string(e.item) + " phi=" + std::to_string(phi));
      }
      if (c > 0)
        for (const auto& [j, cj] : global_.counts())
          if (static_cast<double>(cj) >= phi * c && !in.count(j))
            Fail(t, "missed frequent item " + std::to_string(j) + " phi=" + std::to_string(phi));
    }
  }
  for (double phi : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0}) {
    if (so.quantile_drift) {
      auto q = root.QuantileByDrift(phi);
      if (c > 0 && (!q || !QuantileOk(global_, *q, phi, eps)))
        Fail(t, "drift quantile phi=" + std::to_string(phi) + " -> " + (q ? std::to_string(*q) : "none"));
    }
    if (so.quantile_summary) {
      auto q = root.QuantileBySummary(phi);
      if (c > 0 && (!q || !QuantileOk(global_, *q, phi, eps)))
        Fail(t, "summary quantile phi=" + std::to_string(phi) + " -> " + (q ? std::to_string(*q) : "none"));
    }
  }
}

}  // namespace

Result<SimulationReport> RunSimulation(const SimulationOptions& o) {
  if (o.sites < 1) return Status::InvalidArgument("simulation", "at least one site");
  WorkloadParams wp;
  wp.sites = static_cast<int>(o.sites);
  wp.spec = o.site.spec;
  wp.eps = o.site.eps;
  wp.rate = o.rate;
  wp.seed = o.seed;
  auto workload = MakeWorkload(o.workload, wp);
  if (!workload) return Status::InvalidArgument("simulation", "unknown workload '" + o.workload + "'");
  std::vector<std::unique_ptr<Site>> sites;
  for (uint32_t s = 0; s < o.sites; ++s) {
    auto site = Site::Create(s, o.site);
    if (!site.ok()) return site.status();
    sites.push_back(std::move(*site));
  }
  SimulationReport report;
  VirtualRoot root(o.sites, o.site.eps);
  CommMeter meter(o.site.spec.window);
  std::unique_ptr<Checker> checker;
  if (o.check) checker = std::make_unique<Checker>(o, &report);
  std::map<int64_t, uint64_t> live;  // timestamp -> accepted items, all sites (for expiries)
  std::vector<Arrival> arrivals;
  std::vector<Message> messages;
  const double k = o.sites, eps = o.site.eps;
  std::array<double, CommMeter::kProtocols> naive_sum{};
  std::array<uint64_t, CommMeter::kProtocols> naive_n{};
  for (int64_t t = 0; t < o.ticks; ++t) {
    meter.AdvanceTo(t);
    uint64_t expired = 0;
    while (!live.empty() && live.begin()->first <= t - o.site.spec.window) {
      expired += live.begin()->second;
      live.erase(live.begin());
    }
    report.expiries += expired;
    meter.Events(t, expired);
    if (checker) checker->Advance(t);
    messages.clear();
    for (uint32_t s = 0; s < o.sites; ++s) {
      arrivals.clear();
      workload->Arrivals(t, static_cast<int>(s), &arrivals);
      for (const Arrival& a : arrivals) {
        if (a.ts > t || !AcceptsArrival(o.site.spec, t, a.ts)) {
          ++report.dropped;
          continue;
        }
        ++live[a.ts];
        ++report.arrivals;
        meter.Events(t, 1);
        if (checker) checker->Add(s, a);
      }
      sites[s]->Tick(t, arrivals, &messages);
    }
    for (const Message& m : messages) {
      root.Apply(m);
      meter.Record(m);
    }
    if (checker) checker->Check(t, root);
    if (t % 64 == 0)
      for (const auto& s : sites) report.max_site_bytes = std::max(report.max_site_bytes, s->MemoryBytes());
    // Windowed cost against the bound's shape.
    const double N = static_cast<double>(meter.window_events());
    for (int p = 0; p < CommMeter::kProtocols; ++p) {
      const uint64_t words = meter.window(static_cast<Protocol>(p)).words;
      WindowCost& wc = report.window[p];
      wc.max_words = std::max(wc.max_words, words);
      if (t >= o.site.spec.window && words > 0) {
        const double ratio = words / ((k / eps) * std::log2(std::max(2.0, N / k)));
        if (ratio > wc.max_ratio) {
          wc.max_ratio = ratio;
          wc.events_at_max = static_cast<uint64_t>(N);
        }
      }
      if (t >= o.ticks - o.site.spec.window) {
        naive_sum[p] += N / static_cast<double>(std::max<uint64_t>(words, 1));
        ++naive_n[p];
      }
    }
  }
  for (int p = 0; p < CommMeter::kProtocols; ++p) {
    report.total[p] = meter.total(static_cast<Protocol>(p));
    if (naive_n[p]) report.window[p].steady_naive_ratio = naive_sum[p] / static_cast<double>(naive_n[p]);
  }
  return report;
}

}  // namespace momenta
