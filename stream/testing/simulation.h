// RunSimulation: k sites and a virtual root over a generated workload, tick
// by tick, with no network: every site ticks (expiry happens with or without
// arrivals), the root applies all messages of the tick, then — when checking
// is on — every guarantee is checked against exact windows (one per site and
// one over all sites). Communication is metered per protocol.
//
// Checks at every tick, for a root eps (site.h for the rules' targets):
//   count         |root - c| <= (eps/24) c, and per site
//   item counts   |root_j - c_j| <= alpha c, alpha = 11 eps/24, for every item
//                 in the window (a sample of 1000 when there are more), every
//                 item the root holds and a few never seen; per site too
//   frequent      for phi in {0.06, 0.1, 0.2, 0.5} above eps/2: every j with
//                 c_j >= phi c returned, none with c_j < (phi - eps) c
//   quantiles     for phi in {0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1}:
//                 QuantileOk (exact_window.h) under each quantile rule that runs
// The tests assert zero violations; the benchmark runs the same harness with
// checks off to measure traffic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stream/protocol/site.h"
#include "stream/testing/comm_meter.h"

namespace momenta {

struct SimulationOptions {
  SiteOptions site;    // spec, eps and which rules run
  uint32_t sites = 1;  // k
  std::string workload = "steady";
  double rate = 20;  // arrivals per site per tick in busy phases
  int64_t ticks = 1000;
  uint64_t seed = 1;
  bool check = true;
};

// Words per window over the bound's shape, at its worst tick.
struct WindowCost {
  uint64_t max_words = 0;         // max over ticks of words sent in (t-W, t]
  double max_ratio = 0;           // max over ticks (after the first window) of
                                  // words / ((k/eps) log2(max(2, N/k)))
  uint64_t events_at_max = 0;     // N(t) where the ratio peaked
  double steady_naive_ratio = 0;  // mean over the last window's ticks of N(t) / max(1, words(t))
};

struct SimulationReport {
  uint64_t arrivals = 0, expiries = 0, dropped = 0;
  uint64_t violations = 0;
  std::vector<std::string> first_violations;  // up to 10, "tick T: what"
  std::array<TrafficCounts, CommMeter::kProtocols> total{};
  std::array<WindowCost, CommMeter::kProtocols> window{};
  size_t max_site_bytes = 0;  // largest Site::MemoryBytes seen (sampled)
};

// InvalidArgument for bad options or an unknown workload.
Result<SimulationReport> RunSimulation(const SimulationOptions& options);

}  // namespace momenta
