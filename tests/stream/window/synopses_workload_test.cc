// The window synopses (count, item counts, quantiles) against an exact window
// at EVERY tick of every generated workload: zero violations of their stated
// bounds. Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "stream/testing/exact_window.h"
#include "stream/testing/workloads.h"
#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

struct Config {
  std::string workload;
  int64_t window;
  int64_t tardiness;
  double eps;
  int64_t ticks;
  double rate;
};

std::string Name(const Config& c) {
  return c.workload + " W=" + std::to_string(c.window) + " tau=" + std::to_string(c.tardiness) +
         " eps=" + std::to_string(c.eps);
}

// Runs one configuration; returns the number of violated checks (and reports
// the first of each kind through gtest).
void RunSynopses(const Config& cfg, uint64_t seed) {
  SCOPED_TRACE(Name(cfg) + " seed=" + std::to_string(seed));
  const WindowSpec spec{cfg.window, cfg.tardiness};
  const double eps = cfg.eps, item_eps = eps / 3;
  auto count = WindowCount::Create(spec, eps);
  auto items = ItemCounts::Create(spec, item_eps);
  auto quant = WindowQuantiles::Create(spec, eps);
  ASSERT_OK(count);
  ASSERT_OK(items);
  ASSERT_OK(quant);
  ExactWindow exact(spec);
  WorkloadParams wp;
  wp.spec = spec;
  wp.eps = eps;
  wp.rate = cfg.rate;
  wp.seed = seed;
  auto workload = MakeWorkload(cfg.workload, wp);
  ASSERT_NE(workload, nullptr);
  std::mt19937_64 rng(seed ^ 0x5eed);
  std::vector<Arrival> arrivals;
  int violations = 0;
  auto fail = [&](const std::string& what, int64_t t) {
    if (violations++ < 5) ADD_FAILURE() << "tick " << t << ": " << what;
  };
  const double phis[] = {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0};
  const double fphis[] = {0.05, 0.1, 0.2, 0.5};
  for (int64_t t = 0; t < cfg.ticks; ++t) {
    arrivals.clear();
    workload->Arrivals(t, 0, &arrivals);
    count->AdvanceTo(t);
    items->AdvanceTo(t);
    quant->AdvanceTo(t);
    exact.AdvanceTo(t);
    for (const Arrival& a : arrivals) {
      const bool ok = exact.Add(a.ts, a.item);
      if (count->Update(a.ts) != ok || items->Update(a.ts, a.item) != ok || quant->Update(a.ts, a.item) != ok)
        fail("acceptance differs from the exact window", t);
    }
    const double c = static_cast<double>(exact.count());
    // Count.
    if (std::abs(count->Estimate() - c) > eps * c)
      fail("count " + std::to_string(count->Estimate()) + " vs " + std::to_string(c), t);
    if (count->Low() > c || count->High() < c) fail("count bounds", t);
    if (std::abs(items->Count() - c) > item_eps / 2 * c) fail("item synopsis count", t);
    if (std::abs(quant->Count() - c) > 0.4 * eps * c + 1e-9) fail("quantile synopsis count", t);
    // Items: every item in the window, every candidate, a few never seen.
    if (items->ErrorBound() > item_eps * c + 1e-9) fail("item error bound over budget", t);
    auto check_item = [&](int64_t j) {
      const double cj = static_cast<double>(exact.Count(j));
      const double e = items->Estimate(j);
      const ItemBounds b = items->Bounds(j);
      if (std::abs(e - cj) > item_eps * c + 1e-9 || b.low > cj || b.high < cj)
        fail("item " + std::to_string(j) + " estimate " + std::to_string(e) + " vs " + std::to_string(cj) +
                 " (c=" + std::to_string(c) + ")",
             t);
    };
    if (exact.counts().size() <= 1000) {
      for (const auto& [j, cj] : exact.counts()) check_item(j);
    } else {
      for (int i = 0; i < 200; ++i) check_item(exact.AtRank(rng() % exact.count()));
    }
    items->ForEachCandidate(check_item);
    for (int i = 0; i < 3; ++i) check_item(static_cast<int64_t>(rng()));
    // Frequent items at 3 * item_eps = eps.
    for (double phi : fphis) {
      if (phi <= 1.5 * item_eps) continue;
      const auto freq = items->Frequent(phi);
      std::unordered_map<int64_t, bool> in;
      for (const auto& f : freq) {
        in[f.item] = true;
        if (static_cast<double>(exact.Count(f.item)) < (phi - eps) * c)
          fail("frequent item below (phi - eps) c, phi=" + std::to_string(phi), t);
      }
      for (const auto& [j, cj] : exact.counts())
        if (static_cast<double>(cj) >= phi * c && !in.count(j))
          fail("missed frequent item " + std::to_string(j) + " phi=" + std::to_string(phi), t);
    }
    // Quantiles and ranks.
    if (quant->RankErrorBound() > eps * c + 1e-9) fail("rank error bound over budget", t);
    const RankSnapshot snap = quant->Snapshot();
    for (double phi : phis) {
      auto q = snap.ValueAtRank(phi * snap.total());
      if (t % 50 == 0 && q != quant->Quantile(phi)) fail("Quantile differs from its snapshot", t);
      if (c == 0) {
        if (q.has_value()) fail("quantile of an empty window", t);
        continue;
      }
      if (!q.has_value() || !QuantileOk(exact, *q, phi, eps))
        fail("quantile phi=" + std::to_string(phi) + " -> " + (q ? std::to_string(*q) : "none"), t);
    }
    if (c > 0 && t % 7 == 0) {
      const int64_t x = exact.AtRank(rng() % exact.count());
      const double r = quant->Rank(x), truth = static_cast<double>(exact.RankLessEq(x));
      if (std::abs(r - truth) > quant->RankErrorBound() + 1e-9) fail("rank of " + std::to_string(x), t);
    }
  }
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(quant->over_budget_collapses(), 0u);
  EXPECT_EQ(count->dropped(), exact.dropped());
}

class SynopsesWorkloadTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SynopsesWorkloadTest, EveryTickWithinBounds) {
  const uint64_t seed = testing::TestSeed();
  const std::string w = GetParam();
  const bool late = w.rfind("late", 0) == 0;
  RunSynopses({w, 60, late ? 30 : 0, 0.1, 360, 30}, seed);
  RunSynopses({w, 150, late ? 149 : 3, 0.05, 600, 15}, seed + 1);
}

INSTANTIATE_TEST_SUITE_P(Workloads, SynopsesWorkloadTest, ::testing::ValuesIn(WorkloadNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace momenta
