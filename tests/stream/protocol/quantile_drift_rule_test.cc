// stream/protocol/quantile_drift_rule.h on its own: over every generated
// workload, with the WindowQuantiles (0.3 eps) and WindowCount (0.02 eps) it
// assumes, at every tick the root's view of the site (DriftSteps) has
//  - N within 0.15 eps c (+1 for N's rounding) of the exact count c,
//  - R within D = 0.75 eps c (+1) of the exact rank function, at each side of
//    every boundary and above the last,
//  - answers (AnswerQuantile, the interval rule) whose exact rank range meets
//    [phi c - (D + phi K) - 1, phi c + (D + phi K) + 1], K = 0.15 eps c,
//  - at most 10/eps + 1 boundaries;
// a check sends at most one COUNT and one LEVEL or DROP per boundary value,
// at most 30/eps + 4 words; and per run the rule costs at most about 1.5
// times what the whole-summary rule sends on the same stream.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "stream/protocol/quantile_drift_rule.h"
#include "stream/protocol/quantile_summary_rule.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/stream/protocol/rule_workload.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint32_t kSite = 5;

TEST(QuantileDriftRuleTest, EveryWorkloadWithinTheHeadersBounds) {
  const uint64_t seed = testing::TestSeed();
  const double phis[] = {0.0, 0.01, 0.25, 0.5, 0.9, 1.0};
  uint64_t levels = 0, drops = 0;
  testing::ForEachRuleRun(seed, [&](const testing::RuleRun& run) {
    const double eps = run.eps;
    QuantileDriftSite site(eps);
    EXPECT_EQ(site.synopsis_eps(), 0.3 * eps);
    EXPECT_EQ(site.count_eps(), 0.02 * eps);
    auto q = WindowQuantiles::Create(run.spec, site.synopsis_eps());
    auto count = WindowCount::Create(run.spec, site.count_eps());
    ASSERT_OK(q);
    ASSERT_OK(count);
    DriftSteps root;
    testing::FirstFailures fail;
    testing::DriveWorkload(
        run, seed,
        [&](int64_t t, const std::vector<Arrival>& accepted, const ExactWindow& exact, std::vector<Message>& out) {
          q->AdvanceTo(t);
          count->AdvanceTo(t);
          for (const Arrival& a : accepted) {
            q->Update(a.ts, a.item);
            count->Update(a.ts);
          }
          site.Check(*q, *count, accepted.size(), kSite, t, &out);
          uint64_t words = 0, counts = 0;
          std::set<int64_t> touched;
          for (const Message& m : out) {
            words += MessageWords(m);
            if (m.site != kSite || m.tick != t) fail(t, "a message of another site or tick");
            if (m.type == MessageType::kQCount) {
              ++counts;
            } else if (m.type == MessageType::kQLevel || m.type == MessageType::kQDrop) {
              (m.type == MessageType::kQLevel ? levels : drops) += 1;
              if (!touched.insert(m.item).second) fail(t, "two messages for boundary " + std::to_string(m.item));
            } else {
              fail(t, "a message of another rule");
            }
            root.Apply(m);
          }
          if (counts > 1) fail(t, "two COUNTs in one check");
          if (static_cast<double>(words) > 30 / eps + 4) fail(t, std::to_string(words) + " words in one check");
          const RankSteps& steps = root.steps();
          const double c = static_cast<double>(exact.count());
          const double D = 0.75 * eps * c, K = 0.15 * eps * c;
          if (steps.count != static_cast<double>(site.reported_count())) fail(t, "root's N is not the site's");
          if (std::abs(steps.count - c) > K + 1)
            fail(t, "N " + std::to_string(steps.count) + ", exact count " + std::to_string(c));
          if (steps.values.size() != site.boundary_count()) fail(t, "root and site disagree on the boundaries");
          if (static_cast<double>(site.boundary_count()) > 10 / eps + 1)
            fail(t, std::to_string(site.boundary_count()) + " boundaries");
          auto rank_ok = [&](int64_t x) {
            const double truth = static_cast<double>(exact.RankLessEq(x));
            if (std::abs(steps.At(x) - truth) > D + 1)
              fail(t, "R(" + std::to_string(x) + ") = " + std::to_string(steps.At(x)) + ", exact rank " +
                          std::to_string(truth) + ", c " + std::to_string(c));
          };
          for (int64_t v : steps.values) {
            rank_ok(v);
            if (v > std::numeric_limits<int64_t>::min()) rank_ok(v - 1);
          }
          rank_ok(std::numeric_limits<int64_t>::max());
          if (c == 0) return;
          for (double phi : phis) {
            const auto v = AnswerQuantile({&steps}, phi);
            if (!v.has_value()) return fail(t, "no answer for phi " + std::to_string(phi));
            const RankRange r = AnswerRanks(exact, *v);
            const double slack = D + phi * K + 1;
            if (static_cast<double>(r.hi) < phi * c - slack || static_cast<double>(r.lo) > phi * c + slack)
              fail(t, "phi " + std::to_string(phi) + " -> " + std::to_string(*v) + " of ranks [" +
                          std::to_string(r.lo) + ", " + std::to_string(r.hi) + "], c " + std::to_string(c));
          }
        });
    EXPECT_EQ(fail.count(), 0);
  });
  EXPECT_GT(levels, 100u);
  EXPECT_GT(drops, 10u);
}

// The drift rule against the whole-summary rule on the same stream, words over
// a whole run: never much dearer (the header's ~1.5x; one check of slack).
TEST(QuantileDriftRuleTest, NeverMuchDearerThanWholeSummaries) {
  const uint64_t seed = testing::TestSeed();
  for (const char* name : {"steady", "alternating", "expiry_storm", "rotation"}) {
    const testing::RuleRun run{name, {100, 0}, 0.05, 50, 400};
    SCOPED_TRACE(testing::Describe(run, seed));
    QuantileDriftSite drift(run.eps);
    QuantileSummarySite whole(run.eps);
    auto dq = WindowQuantiles::Create(run.spec, drift.synopsis_eps());
    auto dc = WindowCount::Create(run.spec, drift.count_eps());
    auto wq = WindowQuantiles::Create(run.spec, whole.synopsis_eps());
    ASSERT_OK(dq);
    ASSERT_OK(dc);
    ASSERT_OK(wq);
    uint64_t drift_words = 0, whole_words = 0;
    testing::DriveWorkload(
        run, seed, [&](int64_t t, const std::vector<Arrival>& accepted, const ExactWindow&, std::vector<Message>& out) {
          dq->AdvanceTo(t);
          dc->AdvanceTo(t);
          wq->AdvanceTo(t);
          for (const Arrival& a : accepted) {
            dq->Update(a.ts, a.item);
            dc->Update(a.ts);
            wq->Update(a.ts, a.item);
          }
          drift.Check(*dq, *dc, accepted.size(), kSite, t, &out);
          for (const Message& m : out) drift_words += MessageWords(m);
          out.clear();
          whole.Check(*wq, accepted.size(), kSite, t, &out);
          for (const Message& m : out) whole_words += MessageWords(m);
        });
    EXPECT_GT(whole_words, 0u);
    EXPECT_LE(static_cast<double>(drift_words), 1.5 * static_cast<double>(whole_words) + 30 / run.eps + 4)
        << "drift " << drift_words << " words, whole summaries " << whole_words;
  }
}

}  // namespace
}  // namespace momenta
