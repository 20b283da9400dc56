// stream/protocol/approx_count_rule.h on its own: over every generated
// workload, with the ItemCounts it assumes (item_eps = synopsis_eps(), touch
// tracking on), the root's value r_j for every item (0 for one never SET or
// turned OFF) stays within alpha * c of the item's exact count c_j at every
// tick, c the window's count, for every item in the window and every item the
// root holds; the messages are SET (a positive count in half units) and OFF
// (of an item that was ON), stamped with the site and tick; the site's
// reported() and on_count() are what the root holds. A stream of singletons
// costs nothing once the first window has passed.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "stream/protocol/approx_count_rule.h"
#include "stream/window/item_counts.h"
#include "tests/assert_ok.h"
#include "tests/stream/protocol/rule_workload.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint32_t kSite = 7;

// What the root holds for one site: item -> count in half units (ON items).
using RootView = std::unordered_map<int64_t, uint64_t>;

// Applies one tick's messages to the root view; false when one is malformed.
bool Apply(const std::vector<Message>& out, int64_t tick, RootView* root) {
  for (const Message& m : out) {
    if (m.site != kSite || m.tick != tick) return false;
    if (m.type == MessageType::kAcSet) {
      if (m.count == 0) return false;
      (*root)[m.item] = m.count;
    } else if (m.type == MessageType::kAcOff) {
      if (root->erase(m.item) != 1) return false;  // OFF of an item that was not ON
    } else {
      return false;
    }
  }
  return true;
}

TEST(ApproxCountRuleTest, EveryWorkloadWithinAlphaAtEveryTick) {
  const uint64_t seed = testing::TestSeed();
  uint64_t sets = 0, offs = 0;
  testing::ForEachRuleRun(seed, [&](const testing::RuleRun& run) {
    const double alpha = run.eps;
    ApproxCountSite site(alpha);
    EXPECT_EQ(site.synopsis_eps(), ApproxCountSite::kBeta * alpha);
    auto items = ItemCounts::Create(run.spec, site.synopsis_eps());
    ASSERT_OK(items);
    items->TrackTouched(true);
    RootView root;
    testing::FirstFailures fail;
    testing::DriveWorkload(
        run, seed,
        [&](int64_t t, const std::vector<Arrival>& accepted, const ExactWindow& exact, std::vector<Message>& out) {
          items->AdvanceTo(t);
          for (const Arrival& a : accepted) items->Update(a.ts, a.item);
          site.Check(*items, kSite, t, &out);
          for (const Message& m : out) (m.type == MessageType::kAcSet ? sets : offs) += 1;
          if (!Apply(out, t, &root)) fail(t, "a malformed message");
          const double c = static_cast<double>(exact.count());
          auto check = [&](int64_t j) {
            auto it = root.find(j);
            const uint64_t half = it == root.end() ? 0 : it->second;
            if (site.reported(j) != half) fail(t, "site and root disagree on item " + std::to_string(j));
            const double r = static_cast<double>(half) / 2, cj = static_cast<double>(exact.Count(j));
            if (std::abs(r - cj) > alpha * c + 1e-9)
              fail(t, "item " + std::to_string(j) + ": root " + std::to_string(r) + ", exact " + std::to_string(cj) +
                          ", c " + std::to_string(c));
          };
          for (const auto& [j, cj] : exact.counts()) check(j);
          for (const auto& [j, half] : root) check(j);
          if (site.on_count() != root.size()) fail(t, "on_count() is not the number of ON items");
        });
    EXPECT_EQ(fail.count(), 0);
  });
  // The workloads turn items on and off (the checks above are not vacuous).
  EXPECT_GT(sets, 100u);
  EXPECT_GT(offs, 10u);
}

// Every arrival a new item: once the items of the first window have left, no
// item comes near alpha/2 of the window, and nothing is sent, however many
// distinct items pass.
TEST(ApproxCountRuleTest, SingletonsCostNothingAfterTheFirstWindow) {
  const WindowSpec spec{100, 0};
  const double alpha = 0.1;
  ApproxCountSite site(alpha);
  auto items = ItemCounts::Create(spec, site.synopsis_eps());
  ASSERT_OK(items);
  items->TrackTouched(true);
  std::vector<Message> out;
  int64_t next = 0;
  uint64_t late_messages = 0;
  for (int64_t t = 0; t < 6 * spec.window; ++t) {
    items->AdvanceTo(t);
    for (int i = 0; i < 20; ++i) items->Update(t, next++);
    out.clear();
    site.Check(*items, kSite, t, &out);
    if (t >= 2 * spec.window) late_messages += out.size();
  }
  EXPECT_EQ(late_messages, 0u) << next << " distinct items";
  EXPECT_EQ(site.on_count(), 0u);
}

}  // namespace
}  // namespace momenta
