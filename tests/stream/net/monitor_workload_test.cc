// The distributed monitor over loopback TCP: k = 4 sites (SiteClient) and a
// root (RootServer) on an ephemeral port, run in lockstep by ticks over every
// generated workload; at every tick the root's answers, asked over its query
// port, meet the eps guarantees against an exact window over the sites the
// answer says it covers. Zero violations. Seeds are printed;
// MOMENTA_SEED=<seed> reproduces a run.
#include "tests/stream/net/net_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace momenta {
namespace {

using testing::LockstepRun;
using testing::RootThread;

class MonitorWorkloadTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MonitorWorkloadTest, RootWithinEpsAtEveryTick) {
  const uint64_t seed = testing::TestSeed();
  const std::string w = GetParam();
  const bool late = w.rfind("late", 0) == 0;
  MonitorParams params;
  params.eps = 0.05;
  params.spec = {100, late ? 99 : 2};
  RootThread root(params);
  LockstepRun run(root, 4, w, 12, seed);
  for (int64_t t = 0; t < 300; ++t) run.Step(t);
  EXPECT_EQ(run.violations(), 0u) << w << " seed=" << seed << run.first_violations();
  EXPECT_EQ(run.checks(), 300u);
}

INSTANTIATE_TEST_SUITE_P(Workloads, MonitorWorkloadTest, ::testing::ValuesIn(WorkloadNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace momenta
