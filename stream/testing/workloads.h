// Generated streams for the tests and benchmarks: the stress workloads of
// stream/REFERENCE.md §9 (bursts, expiry storms, counts hovering at thresholds,
// many small items rising together, arrivals exactly tau late, one giant
// item, uniform noise, ...), each deterministic for a given seed.
//
// A workload produces, for each clock tick t and each of k sites, the items
// that ARRIVE at that site at t, each with its timestamp (t - tau <= ts <= t).
// Ask for ticks in increasing order, every site once per tick.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stream/window/window_spec.h"

namespace momenta {

struct WorkloadParams {
  int sites = 1;     // k
  WindowSpec spec;   // W and tau
  double eps = 0.1;  // the protocols' eps: thresholds some workloads aim at
  double rate = 20;  // mean arrivals per site per tick in busy phases
  uint64_t seed = 1;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // Appends the arrivals of `site` at tick t to *out.
  virtual void Arrivals(int64_t t, int site, std::vector<Arrival>* out) = 0;
};

// Names, in the order of stream/REFERENCE.md §9: steady, burst, expiry_storm, square,
// hover_count, small_rising, hover_ac, rotation, imbalance, distinct,
// increasing, decreasing, alternating, duplicates, all_equal, late_uniform,
// late_exact, idle, giant, noise. nullptr for an unknown name.
std::unique_ptr<Workload> MakeWorkload(std::string_view name, const WorkloadParams& params);
const std::vector<std::string>& WorkloadNames();

}  // namespace momenta
