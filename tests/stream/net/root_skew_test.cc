// The root's answers hold for one time, as_of, whatever pace each site keeps
// (root_state.h): sites that run ahead of the others (by up to the window
// and more), start late, die and come back, and finish (their input ends).
// Each site is a Site fed by a generated workload at its own pace; its frames
// go straight into a RootState (no sockets: every interleaving is exact and
// repeatable). After every frame, the root's answers are checked against the
// exact window over (as_of - W, as_of] of the sites it says it covers, and an
// answer for one as_of and one set of covered sites must never change.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "stream/net/root_state.h"
#include "stream/protocol/site.h"
#include "stream/protocol/site_mirror.h"
#include "stream/testing/exact_window.h"
#include "stream/testing/workloads.h"
#include "tests/assert_ok.h"

namespace momenta {
namespace {

// One site as SiteClient runs it, with the wire replaced by calls.
struct SimSite {
  std::string name;
  std::unique_ptr<Site> site;
  SiteMirror mirror{SIZE_MAX};
  std::optional<int64_t> clock;
  std::vector<std::pair<int64_t, Arrival>> taken;  // (tick, item): what it took, for the oracle
  uint32_t slot = 0;
  bool connected = false, finished = false;
  int64_t last_time = 0;
  std::vector<Message> final_snapshot, drain;  // resent on a reconnection once finished
};

class SkewHarness {
 public:
  SkewHarness(const MonitorParams& p, size_t max_held) : params_(p), root_(p, 16, max_held) {}

  SimSite& Add(const std::string& name) {
    sites_.push_back(std::make_unique<SimSite>());
    SimSite& s = *sites_.back();
    s.name = name;
    SiteOptions o;
    o.spec = params_.spec;
    o.eps = params_.eps;
    auto site = Site::Create(0, o);
    EXPECT_OK(site);
    s.site = std::move(*site);
    return s;
  }

  // (Re)connects: HELLO, then the snapshot of what the site holds (and
  // FINAL again, for a finished site).
  void Connect(SimSite& s) {
    auto slot = root_.Attach(s.name, "sim");
    ASSERT_OK(slot);
    s.slot = *slot;
    s.connected = true;
    if (s.finished) {  // its state at its last time, and the drain again
      ASSERT_OK(root_.ApplySnapshot(s.slot, Batch{s.last_time, s.final_snapshot}, 0));
      ASSERT_OK(root_.ApplyFinal(s.slot, FinalBatch{s.last_time, Batch{*s.clock, s.drain}}, 0));
    } else {
      const int64_t at = s.clock.value_or(-kMaxTime);
      ASSERT_OK(root_.ApplySnapshot(s.slot, Batch{at, s.mirror.Snapshot(at)}, 0));
    }
    Check("connect " + s.name);
  }

  void Disconnect(SimSite& s) {
    s.connected = false;
    root_.Detach(s.slot, "killed");
    Check("kill " + s.name);
  }

  // Tick t with these arrivals; the batch goes out when connected.
  void Tick(SimSite& s, int64_t t, const std::vector<Arrival>& arrivals) {
    std::vector<Message> out;
    for (int64_t c = s.site->NextChange(); c < t; c = s.site->NextChange()) s.site->Tick(c, {}, &out);
    s.site->Tick(t, arrivals, &out);
    for (const Message& m : out) ASSERT_OK(s.mirror.Apply(m));
    for (const Arrival& a : arrivals)
      if (a.ts <= t && AcceptsArrival(params_.spec, t, a.ts)) s.taken.push_back({t, a});
    s.clock = t;
    if (!s.connected) return;
    ASSERT_OK(root_.ApplyBatch(s.slot, Batch{t, out}, 0));
    Check(s.name + " tick " + std::to_string(t));
  }

  // The input ended: the drain (SiteClient::Finish), FINAL, and the
  // connection closes (momenta site --once).
  void Finish(SimSite& s) {
    s.finished = true;
    s.last_time = s.clock.value_or(-kMaxTime);
    s.final_snapshot = s.mirror.Snapshot(s.last_time);
    std::vector<Message>& drain = s.drain;
    for (int64_t t = s.site->NextChange(); s.clock && t < kMaxTime; t = s.site->NextChange()) {
      std::vector<Message> out;
      s.site->Tick(t, {}, &out);
      for (const Message& m : out) ASSERT_OK(s.mirror.Apply(m));
      drain.insert(drain.end(), out.begin(), out.end());
      s.clock = t;
    }
    ASSERT_OK(root_.ApplyFinal(s.slot, FinalBatch{s.last_time, Batch{s.clock.value_or(-kMaxTime), drain}}, 0));
    Check("finish " + s.name);
    root_.Detach(s.slot, "site disconnected");
    s.connected = false;
    Check("finished " + s.name + " gone");
  }

  RootState& root() { return root_; }
  uint64_t checks() const { return checks_; }
  uint64_t covered_checks() const { return covered_checks_; }

  // The root's answers against the exact window of the covered sites.
  void Check(const std::string& when) {
    ++checks_;
    const auto as_of = root_.AsOf();
    const auto covered = root_.Covered();
    if (!as_of) {
      EXPECT_EQ(root_.Count(), 0) << when;
      return;
    }
    if (!covered.empty()) ++covered_checks_;
    // Replayed in tick order, as the sites took them, then moved to as_of.
    std::string key = std::to_string(*as_of);
    std::vector<std::pair<int64_t, Arrival>> items;
    for (const std::string& name : covered) {
      key += "," + name;
      const SimSite& s = **std::find_if(sites_.begin(), sites_.end(), [&](auto& p) { return p->name == name; });
      for (const auto& ta : s.taken)
        if (ta.first <= *as_of && ta.second.ts > *as_of - params_.spec.window) items.push_back(ta);
    }
    std::stable_sort(items.begin(), items.end(), [](auto& x, auto& y) { return x.first < y.first; });
    ExactWindow exact(params_.spec);
    for (const auto& [tick, a] : items) {
      exact.AdvanceTo(std::max(exact.now(), tick));
      EXPECT_TRUE(exact.Add(a.ts, a.item));
    }
    exact.AdvanceTo(std::max(exact.now(), *as_of));
    const double c = static_cast<double>(exact.count());
    const double eps = params_.eps;
    EXPECT_LE(std::abs(root_.Count() - c), eps / 24 * c + 1e-9)
        << when << ": as_of=" << *as_of << " covered " << key << " count " << root_.Count() << " exact " << c;
    const double alpha = 11 * eps / 24;
    for (const auto& [item, n] : exact.counts())
      EXPECT_LE(std::abs(root_.ItemCount(item) - static_cast<double>(n)), alpha * c + 1e-9)
          << when << ": item " << item << " as_of=" << *as_of;
    for (const ItemEstimate& e : root_.Items())
      EXPECT_LE(std::abs(e.count - static_cast<double>(exact.Count(e.item))), alpha * c + 1e-9)
          << when << ": item " << e.item << " as_of=" << *as_of;
    for (double phi : {0.1, 0.5, 0.9}) {
      if (auto q = root_.Quantile(phi); q && exact.count() > 0) {
        EXPECT_TRUE(QuantileOk(exact, *q, phi, eps)) << when << ": quantile " << phi << " as_of=" << *as_of;
      }
    }
    // The same as_of over the same sites: the same answer, whenever asked.
    const auto [it, fresh] = seen_.try_emplace(key, root_.Count());
    if (!fresh) {
      EXPECT_EQ(it->second, root_.Count()) << when << ": the answer for " << key << " changed";
    }
  }

 private:
  const MonitorParams params_;
  RootState root_;
  std::vector<std::unique_ptr<SimSite>> sites_;
  std::map<std::string, double> seen_;
  uint64_t checks_ = 0, covered_checks_ = 0;
};

// The skewed two sites: A stamps 1000, 2000, 3000 (item 1, one a stamp), B
// 1000 ... 10000 (item 2, ten a stamp), W = 1 min, eps = 0.01. B has
// reported through 10000, A through 3000: as_of is 3000, and the answers
// are those of (3000 - W, 3000]: count 33, item 2 30 (exact at these sizes),
// not B's whole stream (103 and 100).
TEST(RootSkewTest, TwoSitesAtDifferentTimesAnswerForAsOf) {
  const MonitorParams p{0.01, {60000, 0}};
  SkewHarness h(p, RootState::kDefaultMaxHeld);
  SimSite& a = h.Add("A");
  SimSite& b = h.Add("B");
  h.Connect(a);
  h.Connect(b);
  h.Tick(a, 1000, {Arrival{1000, 1}});  // (a site with no clock yet would not hold B back)
  for (int64_t t = 1000; t <= 10000; t += 1000) h.Tick(b, t, std::vector<Arrival>(10, Arrival{t, 2}));
  EXPECT_EQ(h.root().AsOf(), 1000);
  EXPECT_EQ(h.root().Count(), 11);
  for (int64_t t = 2000; t <= 3000; t += 1000) h.Tick(a, t, {Arrival{t, 1}});
  ASSERT_EQ(h.root().AsOf(), 3000);
  EXPECT_EQ(h.root().Covered(), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(h.root().Count(), 33);
  EXPECT_EQ(h.root().ItemCount(2), 30);
  EXPECT_EQ(h.root().ItemCount(1), 3);
  // A finishes: B's time is the answers' time; A's items are still in the window.
  h.Finish(a);
  EXPECT_EQ(h.root().AsOf(), 10000);
  EXPECT_EQ(h.root().Count(), 103);
  EXPECT_EQ(h.root().ItemCount(1), 3);
  EXPECT_TRUE(h.root().Reached(10000));
  EXPECT_EQ(SlotStateName(h.root().slots()[a.slot].state), std::string("finished"));
}

// A site whose ticks are far apart (data clock: a tick per stamp) still
// expires on time: it also ticks where a window changes (Site::NextChange),
// so the root holds its state at any as_of between its stamps.
TEST(RootSkewTest, SparseTicksExpireAtTheirTime) {
  const MonitorParams p{0.1, {100, 0}};
  SkewHarness h(p, RootState::kDefaultMaxHeld);
  SimSite& a = h.Add("A");
  SimSite& b = h.Add("B");
  h.Connect(a);
  h.Connect(b);
  h.Tick(b, 10, {Arrival{10, 2}});
  h.Tick(a, 10, std::vector<Arrival>(5, Arrival{10, 1}));
  h.Tick(a, 300, {Arrival{300, 1}});
  for (int64_t t = 15; t <= 115; t += 5) h.Tick(b, t, {Arrival{t, 2}});
  ASSERT_EQ(h.root().AsOf(), 115);
  EXPECT_EQ(h.root().ItemCount(1), 0);  // A's five items stamped 10 left at 110
  EXPECT_EQ(h.root().Count(), 20);      // B's stamped 20 ... 115
}

// A site with no clock yet does not hold as_of back, and is named.
TEST(RootSkewTest, SiteWithNoClockIsLeftOutAndNamed) {
  const MonitorParams p{0.01, {60000, 0}};
  SkewHarness h(p, RootState::kDefaultMaxHeld);
  SimSite& a = h.Add("A");
  SimSite& b = h.Add("B");
  h.Connect(a);
  h.Connect(b);
  for (int64_t t = 1000; t <= 3000; t += 1000) h.Tick(a, t, {Arrival{t, 1}});
  EXPECT_EQ(h.root().AsOf(), 3000);
  EXPECT_EQ(h.root().Uncovered(), std::vector<std::string>{"B"});
  EXPECT_EQ(h.root().Coverage(b.slot), "no clock yet");
  EXPECT_FALSE(h.root().Reached(3000));  // `at` waits for it
  EXPECT_EQ(h.root().Count(), 3);
}

// A site far ahead holds at most max_held messages, then is answered for as
// ahead, and comes back once the others reach its time.
TEST(RootSkewTest, SiteTooFarAheadIsLeftOutThenComesBack) {
  const MonitorParams p{0.1, {100, 0}};
  SkewHarness h(p, /*max_held=*/8);
  SimSite& a = h.Add("A");
  SimSite& b = h.Add("B");
  h.Connect(a);
  h.Connect(b);
  h.Tick(a, 1, {Arrival{1, 9}});
  for (int64_t t = 1; t <= 1000; ++t)
    h.Tick(b, t, std::vector<Arrival>(static_cast<size_t>(t % 7 + 1), Arrival{t, t % 5}));
  EXPECT_EQ(h.root().AsOf(), 1);
  EXPECT_EQ(h.root().Uncovered(), std::vector<std::string>{"B"});
  EXPECT_NE(h.root().Coverage(b.slot).find("ahead"), std::string::npos) << h.root().Coverage(b.slot);
  EXPECT_LE(h.root().held(), 8u);
  for (int64_t t = 2; t <= 1200; ++t) h.Tick(a, t, {Arrival{t, 9}});
  EXPECT_EQ(h.root().Covered(), (std::vector<std::string>{"A", "B"}));
}

struct PaceCase {
  std::string workload;
  size_t max_held;
  uint64_t seed;
};

void PrintTo(const PaceCase& c, std::ostream* os) {
  *os << c.workload << " max_held " << c.max_held << " seed " << c.seed;
}

class RootSkewPaceTest : public ::testing::TestWithParam<PaceCase> {};

// Three sites over a generated workload, W = 40, tau = 2, 320 ticks:
//   fast  runs ahead of `steady` by a lead that grows to 2 W and back
//   steady one tick a round
//   late  starts at tick 60, dies at 140 (ticks on, unheard), comes back at
//         170, and its input ends at 230 (FINAL, then it disconnects)
TEST_P(RootSkewPaceTest, EveryAnswerHoldsForAsOf) {
  const PaceCase& pc = GetParam();
  SCOPED_TRACE("workload " + pc.workload + " seed " + std::to_string(pc.seed) + " max_held " +
               std::to_string(pc.max_held));
  const MonitorParams p{0.1, {40, 2}};
  const int64_t ticks = 320, W = p.spec.window;
  WorkloadParams wp;
  wp.sites = 3;
  wp.spec = p.spec;
  wp.eps = p.eps;
  wp.rate = 4;
  wp.seed = pc.seed;
  auto work = MakeWorkload(pc.workload, wp);
  ASSERT_NE(work, nullptr);
  std::vector<std::vector<std::vector<Arrival>>> arr(3, std::vector<std::vector<Arrival>>(ticks + 1));
  for (int64_t t = 0; t <= ticks; ++t)
    for (int s = 0; s < 3; ++s) work->Arrivals(t, s, &arr[s][t]);

  SkewHarness h(p, pc.max_held);
  SimSite* sites[3] = {&h.Add("fast"), &h.Add("steady"), &h.Add("late")};
  h.Connect(*sites[0]);
  h.Connect(*sites[1]);
  int64_t next[3] = {0, 0, 60};
  auto run_to = [&](int s, int64_t target) {
    for (; next[s] <= std::min(target, ticks); ++next[s]) {
      SimSite& x = *sites[s];
      if (s == 2 && next[s] == 140) h.Disconnect(x);
      if (s == 2 && next[s] == 170) h.Connect(x);
      if (s == 2 && next[s] == 230) {
        h.Finish(x);
        next[s] = ticks + 1;
        return;
      }
      h.Tick(x, next[s], arr[s][next[s]]);
    }
  };
  for (int64_t r = 0; r <= ticks + 2 * W; ++r) {
    const int64_t lead = r < 150 ? std::min<int64_t>(r, 2 * W) : std::max<int64_t>(0, 2 * W - (r - 150));
    run_to(0, r + lead);
    run_to(1, r);
    if (r == 60) h.Connect(*sites[2]);
    if (r >= 60) run_to(2, r);
  }
  EXPECT_GT(h.covered_checks(), 500u);
}

INSTANTIATE_TEST_SUITE_P(Workloads, RootSkewPaceTest,
                         ::testing::Values(PaceCase{"steady", RootState::kDefaultMaxHeld, 1},
                                           PaceCase{"burst", RootState::kDefaultMaxHeld, 2},
                                           PaceCase{"expiry_storm", RootState::kDefaultMaxHeld, 3},
                                           PaceCase{"rotation", RootState::kDefaultMaxHeld, 4},
                                           PaceCase{"late_uniform", RootState::kDefaultMaxHeld, 5},
                                           PaceCase{"increasing", RootState::kDefaultMaxHeld, 6},
                                           PaceCase{"steady", 16, 7}, PaceCase{"burst", 16, 8}),
                         [](const ::testing::TestParamInfo<PaceCase>& i) {
                           return i.param.workload + "_held" + std::to_string(i.param.max_held);
                         });

}  // namespace
}  // namespace momenta
