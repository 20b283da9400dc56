// Drives a reporting rule's test over the generated workloads
// (stream/testing/workloads.h), one site: at each tick the exact window
// advances and takes the tick's arrivals as a site accepts them (stamped no
// later than the tick and within the tardiness, as Site::Tick does), then the
// test feeds its synopses the same arrivals, runs the rule and checks it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stream/protocol/messages.h"
#include "stream/testing/exact_window.h"
#include "stream/testing/workloads.h"
#include "stream/window/window_spec.h"

namespace momenta::testing {

struct RuleRun {
  std::string workload;
  WindowSpec spec;
  double eps = 0.1;  // the rule's eps (eps_b, alpha or eps)
  double rate = 30;
  int64_t ticks = 360;
};

inline std::string Describe(const RuleRun& r, uint64_t seed) {
  return r.workload + " W=" + std::to_string(r.spec.window) + " tau=" + std::to_string(r.spec.tardiness) +
         " eps=" + std::to_string(r.eps) + " seed=" + std::to_string(seed);
}

// Two runs of a workload, as the synopsis workload test runs them: W = 60 at
// eps 0.1 and W = 150 at eps 0.05; the late_* workloads with tau up to W-1.
inline std::vector<RuleRun> RuleRuns(const std::string& workload) {
  const bool late = workload.rfind("late", 0) == 0;
  return {{workload, {60, late ? 30 : 0}, 0.1, 30, 360}, {workload, {150, late ? 149 : 3}, 0.05, 15, 600}};
}

// Counts a run's failed checks and reports the first five (one bad tick can
// fail a check for every item it holds).
class FirstFailures {
 public:
  void operator()(int64_t t, const std::string& what) {
    if (count_++ < 5) ADD_FAILURE() << "tick " << t << ": " << what;
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

// body(run) for the two runs of every generated workload, each under a trace
// naming the run and its seed.
template <class Body>
void ForEachRuleRun(uint64_t seed, Body&& body) {
  for (const std::string& name : WorkloadNames()) {
    for (const RuleRun& run : RuleRuns(name)) {
      SCOPED_TRACE(Describe(run, seed));
      body(run);
    }
  }
}

// on_tick(t, accepted, exact, out) once per tick, after the exact window took
// the accepted arrivals; `out` is empty, for the messages of the tick.
template <class OnTick>
void DriveWorkload(const RuleRun& run, uint64_t seed, OnTick&& on_tick) {
  WorkloadParams wp;
  wp.spec = run.spec;
  wp.eps = run.eps;
  wp.rate = run.rate;
  wp.seed = seed;
  auto workload = MakeWorkload(run.workload, wp);
  ASSERT_NE(workload, nullptr) << run.workload;
  ExactWindow exact(run.spec);
  std::vector<Arrival> arrivals, accepted;
  std::vector<Message> out;
  for (int64_t t = 0; t < run.ticks; ++t) {
    arrivals.clear();
    accepted.clear();
    out.clear();
    workload->Arrivals(t, 0, &arrivals);
    exact.AdvanceTo(t);
    for (const Arrival& a : arrivals) {
      if (a.ts > t || !AcceptsArrival(run.spec, t, a.ts)) continue;
      exact.Add(a.ts, a.item);
      accepted.push_back(a);
    }
    on_tick(t, accepted, exact, out);
  }
}

}  // namespace momenta::testing
