// stream/protocol/quantile_summary_rule.h on its own: every summary is the
// one the header describes (n the rounded count estimate; for i = 1..m,
// rho_i = ceil(i n / m) and v_i the smallest sampled value whose estimated rank
// reaches rho_i, equal values keeping the largest rank; 2 + 2m words at
// most), Due fires exactly past the header's thresholds, the root's answers
// (ApplySummary, AnswerQuantile) are eps-quantiles of the exact window at
// every tick of every generated workload, and a steady stream costs about
// 20/eps summaries a window. Seeds are printed; MOMENTA_SEED=<seed>
// reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "stream/protocol/quantile_summary_rule.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/stream/protocol/rule_workload.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint32_t kSite = 3;

// The summary of q the header describes.
std::vector<RankPair> ExpectedPairs(const WindowQuantiles& q, uint64_t n, size_t m) {
  std::vector<RankPair> pairs;
  if (n == 0) return pairs;
  const RankSnapshot snap = q.Snapshot();
  for (size_t i = 1; i <= m; ++i) {
    const uint64_t rho = static_cast<uint64_t>(std::ceil(static_cast<double>(i * n) / static_cast<double>(m)));
    const int64_t v = *snap.ValueAtRank(static_cast<double>(rho));
    if (!pairs.empty() && pairs.back().value == v) {
      pairs.back().rank = rho;
    } else {
      pairs.push_back({v, rho});
    }
  }
  return pairs;
}

TEST(QuantileSummaryRuleTest, SummariesAndAnswersOnEveryWorkload) {
  const uint64_t seed = testing::TestSeed();
  const double phis[] = {0.0, 0.01, 0.25, 0.5, 0.9, 1.0};
  uint64_t summaries = 0;
  testing::ForEachRuleRun(seed, [&](const testing::RuleRun& run) {
    QuantileSummarySite site(run.eps);
    EXPECT_EQ(site.synopsis_eps(), run.eps / 10);
    const size_t m = site.pairs_per_summary();
    EXPECT_EQ(m, static_cast<size_t>(std::ceil(10 / run.eps)) + 1);
    auto q = WindowQuantiles::Create(run.spec, site.synopsis_eps());
    ASSERT_OK(q);
    RankSteps root;
    bool sent = false;
    testing::FirstFailures fail;
    testing::DriveWorkload(
        run, seed,
        [&](int64_t t, const std::vector<Arrival>& accepted, const ExactWindow& exact, std::vector<Message>& out) {
          q->AdvanceTo(t);
          for (const Arrival& a : accepted) q->Update(a.ts, a.item);
          site.Check(*q, accepted.size(), kSite, t, &out);
          if (out.size() > 1) fail(t, "more than one summary in a tick");
          for (const Message& msg : out) {
            ++summaries;
            if (msg.type != MessageType::kQSummary || msg.site != kSite || msg.tick != t) fail(t, "not a summary");
            const uint64_t n = static_cast<uint64_t>(std::llround(q->Count()));
            if (msg.count != n) fail(t, "n " + std::to_string(msg.count) + ", count estimate " + std::to_string(n));
            if (msg.pairs != ExpectedPairs(*q, n, m)) fail(t, "pairs differ from the header's summary");
            if (msg.pairs.size() > m || MessageWords(msg) != 2 + 2 * msg.pairs.size())
              fail(t, "a summary of " + std::to_string(msg.pairs.size()) + " pairs costs " +
                          std::to_string(MessageWords(msg)) + " words");
            ApplySummary(msg, &root);
            sent = true;
          }
          if (exact.count() == 0) return;
          if (!sent) return fail(t, "items in the window and no summary sent");
          for (double phi : phis) {
            const auto v = AnswerQuantile({&root}, phi);
            if (!v.has_value() || !QuantileOk(exact, *v, phi, run.eps))
              fail(t, "phi " + std::to_string(phi) + " -> " + (v ? std::to_string(*v) : "none"));
          }
        });
    EXPECT_EQ(fail.count(), 0);
  });
  EXPECT_GT(summaries, 1000u);
}

// Due: a first summary once there is something to say; later ones when the
// changes exceed gamma * n_last or the count leaves [n_last/(1+gamma),
// (1+gamma) n_last], not on the boundaries.
TEST(QuantileSummaryRuleTest, DueExactlyPastTheThresholds) {
  const double g = 0.01, n = 1000;
  EXPECT_FALSE(QuantileSummarySite::Due(g, false, 0, 0, 0));
  EXPECT_TRUE(QuantileSummarySite::Due(g, false, 0, 0, 1));
  EXPECT_FALSE(QuantileSummarySite::Due(g, true, n, 0, n));
  EXPECT_FALSE(QuantileSummarySite::Due(g, true, n, g * n, n));
  EXPECT_TRUE(QuantileSummarySite::Due(g, true, n, std::nextafter(g * n, 1e9), n));
  EXPECT_FALSE(QuantileSummarySite::Due(g, true, n, 0, (1 + g) * n));
  EXPECT_TRUE(QuantileSummarySite::Due(g, true, n, 0, std::nextafter((1 + g) * n, 1e9)));
  EXPECT_FALSE(QuantileSummarySite::Due(g, true, n, 0, n / (1 + g)));
  EXPECT_TRUE(QuantileSummarySite::Due(g, true, n, 0, std::nextafter(n / (1 + g), 0)));
  EXPECT_TRUE(QuantileSummarySite::Due(g, true, n, 0, 0));  // the window emptied: n = 0 goes out
}

// A steady stream (rate r, window W): changes grow by ~2r a tick, a summary
// is due every ~gamma W / 2 ticks, so about 2/gamma = 20/eps summaries a
// window, each of 2 + 2m words.
TEST(QuantileSummaryRuleTest, SteadyStreamSendsAboutTwentyOverEpsSummariesAWindow) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  const WindowSpec spec{2000, 0};
  const double eps = 0.1;
  QuantileSummarySite site(eps);
  auto q = WindowQuantiles::Create(spec, site.synopsis_eps());
  ASSERT_OK(q);
  std::vector<Message> out;
  uint64_t in_last_window = 0;
  for (int64_t t = 0; t < 3 * spec.window; ++t) {
    q->AdvanceTo(t);
    for (int i = 0; i < 10; ++i) q->Update(t, static_cast<int64_t>(rng() % 100000));
    out.clear();
    site.Check(*q, 10, kSite, t, &out);
    if (t >= 2 * spec.window) in_last_window += out.size();
  }
  EXPECT_LE(in_last_window, static_cast<uint64_t>(20 / eps) + 2) << "seed " << seed;
  EXPECT_GE(in_last_window, static_cast<uint64_t>(10 / eps)) << "seed " << seed;
}

}  // namespace
}  // namespace momenta
