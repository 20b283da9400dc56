// stream/window/bucket_window.h on its own, with a payload that records every
// timestamp it holds: random bulk and late arrivals (tau up to W-1), clock
// steps of 0, 1 and past the whole window, checked after every step against a
// brute-force count of the accepted items in (now-W, now]:
//  - CountLow() <= c <= CountHigh(), and |CountEstimate() - c| <= (lambda/2) c
//    (the straddler holds at most lambda*c items, the only uncertainty);
//  - the items the buckets hold in the window are exactly c, full_n() counts
//    the full buckets, full_err() sums their err, a straddler holds an expired
//    and an unexpired item;
//  - every merged bucket g keeps n_g <= lambda * newer(g); settled ranges are
//    disjoint and increasing, unsettled buckets one timestamp in [now-tau, now];
//  - the hooks come as the header says (Retire on the newest unsettled bucket,
//    Seal's `newest`, Detach before Drop, Drop only when expired, MergeGroup's
//    members oldest first);
//  - after Compact(), the settled buckets are within O((1/lambda) log(lambda N));
//  - Restore rebuilds the same state and refuses states that break an invariant.
// Seeds are printed; MOMENTA_SEED=<seed> reproduces a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "stream/window/bucket_window.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

// What a bucket holds: (timestamp, items) in the order they came in.
struct Stamps {
  std::vector<std::pair<int64_t, uint64_t>> items;
  bool detached = false;  // Detach was called
};
using Window = BucketWindow<Stamps>;
using Bucket = Window::Bucket;

// The hooks, checking each call against the header's contract. Seal raises
// err (as a payload reduction would); MergeGroup adds a little more (errors
// stay within n/2, so that Restore takes them).
struct CheckingHooks {
  const Window* w = nullptr;
  int failures = 0;
  uint64_t seals = 0, merges = 0, drops = 0;

  void Fail(const std::string& what) {
    if (failures++ < 5) ADD_FAILURE() << what << " (clock " << w->now() << ")";
  }
  void Retire(Bucket& b) {
    if (&b != w->newest()) Fail("Retire on a bucket that is not the newest unsettled one");
  }
  void Seal(Bucket& b, bool newest) {
    ++seals;
    // b is still the oldest unsettled bucket: newest when it is also the last one.
    if (newest != (&b == w->newest())) Fail("Seal's newest flag is wrong");
    if (b.max_ts >= w->now() - w->spec().tardiness) Fail("a bucket sealed while late items may still reach it");
    if (b.err + 0.25 <= 0.5 * static_cast<double>(b.n)) b.err += 0.25;  // errors stay <= n/2
  }
  void Detach(Bucket& b) {
    if (b.payload.detached) Fail("Detach twice");
    if (b.min_ts > w->edge()) Fail("Detach of a bucket with no expired item");
    b.payload.detached = true;
  }
  void Drop(Bucket& b) {
    ++drops;
    if (!b.payload.detached) Fail("Drop of a full bucket without Detach");
    if (b.max_ts > w->edge()) Fail("Drop of a bucket with unexpired items");
  }
  void MergeGroup(Bucket* const* members, size_t count, Bucket& out) {
    ++merges;
    if (count < 2) Fail("a merge of fewer than two buckets");
    uint64_t n = 0;
    double err = 0;
    for (size_t i = 0; i < count; ++i) {
      if (i > 0 && members[i - 1]->max_ts > members[i]->min_ts) Fail("merge members not oldest first");
      if (members[i]->payload.detached) Fail("a detached bucket merged");
      n += members[i]->n;
      err += members[i]->err;
      out.payload.items.insert(out.payload.items.end(), members[i]->payload.items.begin(),
                               members[i]->payload.items.end());
    }
    if (out.n != n || out.min_ts != members[0]->min_ts || out.max_ts != members[count - 1]->max_ts)
      Fail("merged bucket's n or times not set from its members");
    out.err = err + 0.25 <= 0.5 * static_cast<double>(n) ? err + 0.25 : err;
  }
};

// Adds `count` items stamped ts, through Insert, to the bucket's payload.
void Add(Window& w, CheckingHooks& hooks, int64_t ts, uint64_t count) {
  Bucket& b = w.Insert(ts, count, hooks);
  if (b.min_ts != ts || b.max_ts != ts) hooks.Fail("Insert returned a bucket of another timestamp");
  if (!b.payload.items.empty() && b.payload.items.back().first == ts) {
    b.payload.items.back().second += count;
  } else {
    b.payload.items.push_back({ts, count});
  }
}

// The accepted items, by timestamp: the exact window.
struct ExactCounts {
  std::map<int64_t, uint64_t> by_ts;
  uint64_t InWindow(int64_t edge) const {
    uint64_t c = 0;
    for (auto it = by_ts.upper_bound(edge); it != by_ts.end(); ++it) c += it->second;
    return c;
  }
};

// Every check of the header's contract that needs only the public state.
void CheckState(const Window& w, const ExactCounts& exact, CheckingHooks& hooks) {
  const int64_t e = w.edge(), now = w.now();
  const double lambda = w.lambda();
  const uint64_t c = exact.InWindow(e);
  const std::string at = " at clock " + std::to_string(now) + ", c = " + std::to_string(c);
  if (w.CountLow() > c || w.CountHigh() < c)
    hooks.Fail("c outside [" + std::to_string(w.CountLow()) + ", " + std::to_string(w.CountHigh()) + "]" + at);
  if (std::abs(w.CountEstimate() - static_cast<double>(c)) > lambda / 2 * static_cast<double>(c) + 1e-9)
    hooks.Fail("estimate " + std::to_string(w.CountEstimate()) + " beyond (lambda/2) c" + at);

  // The buckets, one by one.
  uint64_t held = 0, full_n = 0, after = 0;
  double full_err = 0;
  for (const Bucket& b : w.unsettled()) after += b.n;
  const auto& settled = w.settled();
  for (size_t i = settled.size(); i-- > 0;) {  // newest first, so `after` counts newer items
    const Bucket& b = settled[i];
    if (b.min_ts<b.max_ts&& static_cast<double>(b.n)> lambda * static_cast<double>(after))
      hooks.Fail("merged bucket of " + std::to_string(b.n) + " over lambda * " + std::to_string(after) + at);
    if (i > 0 && settled[i - 1].max_ts > b.min_ts) hooks.Fail("settled ranges overlap" + at);
    if (b.max_ts <= e) hooks.Fail("an expired bucket kept" + at);
    after += b.n;
  }
  if (w.straddling() != (w.straddler() != nullptr)) hooks.Fail("straddling() and straddler() disagree");
  for (size_t i = 0; i < settled.size(); ++i) {
    const Bucket& b = settled[i];
    const bool straddler = i == 0 && w.straddling();
    if (straddler != (b.min_ts <= e)) hooks.Fail("straddler is not the bucket across the edge" + at);
    if (straddler != b.payload.detached) hooks.Fail("a full bucket detached, or the straddler not" + at);
  }
  for (size_t i = 0; i < w.unsettled().size(); ++i) {
    const Bucket& b = w.unsettled()[i];
    if (b.min_ts != b.max_ts || b.max_ts < now - w.spec().tardiness || b.max_ts > now)
      hooks.Fail("an unsettled bucket outside one timestamp in [now-tau, now]" + at);
    if (i > 0 && w.unsettled()[i - 1].max_ts > b.min_ts) hooks.Fail("unsettled buckets out of order" + at);
  }
  auto payload = [&](const Bucket& b, bool full) {
    uint64_t n = 0, in = 0, out = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& [ts, k] : b.payload.items) {
      n += k;
      (ts > e ? in : out) += k;
      lo = std::min(lo, ts);
      hi = std::max(hi, ts);
    }
    if (n != b.n || lo != b.min_ts || hi != b.max_ts) hooks.Fail("a bucket's n or times differ from its items" + at);
    if (full && out > 0) hooks.Fail("a full bucket holds expired items" + at);
    if (!full && (in == 0 || out == 0)) hooks.Fail("the straddler lacks an expired or an unexpired item" + at);
    held += in;
  };
  if (const Bucket* s = w.straddler()) payload(*s, false);
  w.ForEachFull([&](const Bucket& b) {
    payload(b, true);
    full_n += b.n;
    full_err += b.err;
  });
  if (held != c) hooks.Fail("the buckets hold " + std::to_string(held) + " items in the window" + at);
  if (full_n != w.full_n()) hooks.Fail("full_n() is not the full buckets' n" + at);
  if (std::abs(full_err - w.full_err()) > 1e-6 * (1 + full_err) || w.full_err() < 0 ||
      (w.full_n() == 0 && w.full_err() != 0))
    hooks.Fail("full_err() " + std::to_string(w.full_err()) + " vs " + std::to_string(full_err) + at);
}

// Settled buckets right after a compaction: each two neighboring runs hold
// more than lambda times the items newer than them, so going back in time the
// items newer than a run grow by at least 2 and by a factor (1 + lambda) every
// two runs; plus the straddler.
// At most 1/lambda + 1 steps of +2 reach 2/lambda items, then log_{1+lambda} N
// steps of (1 + lambda): runs <= 2/lambda + 2 log(N + 1) / log(1 + lambda) + 6.
double CompactedBound(double lambda, uint64_t n) {
  return 2 / lambda + 2 * std::log(static_cast<double>(n) + 1) / std::log1p(lambda) + 7;
}

struct Config {
  int64_t window;
  int64_t tardiness;
  double lambda;
  int64_t ticks;
  uint64_t max_per_tick;  // arrivals per tick: 0..max, each of 1..4 items
};

void RunRandom(const Config& cfg, uint64_t seed) {
  SCOPED_TRACE("W=" + std::to_string(cfg.window) + " tau=" + std::to_string(cfg.tardiness) +
               " lambda=" + std::to_string(cfg.lambda) + " seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  Window w({cfg.window, cfg.tardiness}, cfg.lambda);
  CheckingHooks hooks;
  hooks.w = &w;
  ExactCounts exact;
  int64_t t = 0;
  w.AdvanceTo(t, hooks);
  for (int64_t step = 0; step < cfg.ticks && hooks.failures == 0; ++step) {
    // Mostly one tick; sometimes none, a few, or (rarely) past the whole window.
    const unsigned r = static_cast<unsigned>(rng() % 100);
    t += r < 10 ? 0 : r < 95 ? 1 : 1 + static_cast<int64_t>(rng() % 5);
    if (rng() % 1000 == 0) t += cfg.window;
    w.AdvanceTo(t, hooks);
    // Bursts and quiet stretches: the rate follows the step.
    const bool quiet = (step / 200) % 4 == 3;
    const uint64_t arrivals = quiet ? 0 : rng() % (cfg.max_per_tick + 1);
    for (uint64_t i = 0; i < arrivals; ++i) {
      const int64_t late = cfg.tardiness == 0 ? 0 : static_cast<int64_t>(rng() % (cfg.tardiness + 1));
      const int64_t ts = t - (rng() % 3 == 0 ? late : 0);
      const uint64_t count = 1 + rng() % 4;
      Add(w, hooks, ts, count);
      exact.by_ts[ts] += count;
    }
    if (rng() % 16 == 0) {  // a payload reduction on the newest bucket
      if (Bucket* b = w.newest(); b && b->err + 0.5 <= 0.5 * static_cast<double>(b->n)) w.AddErr(*b, 0.5);
    }
    CheckState(w, exact, hooks);
    if (step % 97 == 0) {
      w.Compact(hooks);
      CheckState(w, exact, hooks);
      const double bound = CompactedBound(cfg.lambda, w.full_n());
      if (static_cast<double>(w.settled_count()) > bound)
        hooks.Fail(std::to_string(w.settled_count()) + " settled buckets after Compact, bound " +
                   std::to_string(bound) + " for " + std::to_string(w.full_n()) + " items");
    }
  }
  EXPECT_EQ(hooks.failures, 0);
  // The run did what it is meant to exercise.
  EXPECT_GT(hooks.seals, 100u);
  if (cfg.window - cfg.tardiness > 2) {  // (with tau = W-1 buckets settle only as they expire)
    EXPECT_GT(hooks.merges, 0u);
  }
  EXPECT_GT(hooks.drops, 10u);

  // Restore rebuilds the same state from the lists.
  Window copy({cfg.window, cfg.tardiness}, cfg.lambda);
  ASSERT_TRUE(copy.Restore(w.now(), w.settled(), w.unsettled()));
  EXPECT_EQ(copy.CountLow(), w.CountLow());
  EXPECT_EQ(copy.CountHigh(), w.CountHigh());
  EXPECT_EQ(copy.CountEstimate(), w.CountEstimate());
  EXPECT_EQ(copy.full_n(), w.full_n());
  EXPECT_NEAR(copy.full_err(), w.full_err(), 1e-6 * (1 + w.full_err()));
  EXPECT_EQ(copy.straddling(), w.straddling());
  // And both go on alike: every item expires, nothing is left.
  CheckingHooks copy_hooks;
  copy_hooks.w = &copy;
  const int64_t end = w.now() + cfg.window;
  w.AdvanceTo(end, hooks);
  copy.AdvanceTo(end, copy_hooks);
  for (const Window* x : {&w, &copy}) {
    EXPECT_EQ(x->CountHigh(), 0u);
    EXPECT_EQ(x->CountEstimate(), 0.0);
    EXPECT_EQ(x->full_err(), 0.0);
    EXPECT_EQ(x->bucket_count(), 0u);
  }
  EXPECT_EQ(hooks.failures + copy_hooks.failures, 0);
}

TEST(BucketWindowTest, RandomArrivalsAgainstABruteForceCount) {
  const uint64_t seed = testing::TestSeed();
  RunRandom({50, 0, 0.1, 3000, 6}, seed);
  RunRandom({200, 20, 0.05, 3000, 8}, seed + 1);
  RunRandom({100, 99, 0.5, 2000, 4}, seed + 2);
  RunRandom({1000, 3, 0.02, 4000, 12}, seed + 3);
  RunRandom({8, 1, 1.0, 2000, 3}, seed + 4);
}

// One item per tick over a long window: buckets of one item each (compacted
// at eightfold), the count within (lambda/2) c of the exact one at every
// tick, and after a compaction a few dozen settled buckets for 20,000 items.
TEST(BucketWindowTest, OneItemPerTickOverALongWindow) {
  for (double lambda : {0.5, 0.2}) {
    SCOPED_TRACE("lambda=" + std::to_string(lambda));
    const int64_t W = 20000;
    Window w({W, 0}, lambda);
    CheckingHooks hooks;
    hooks.w = &w;
    ExactCounts exact;
    for (int64_t t = 0; t < 3 * W && hooks.failures == 0; ++t) {
      w.AdvanceTo(t, hooks);
      Add(w, hooks, t, 1);
      exact.by_ts[t] += 1;
      if (t % 101 == 0) CheckState(w, exact, hooks);
      if (t % 1000 == 999) {
        w.Compact(hooks);
        const double bound = CompactedBound(lambda, w.full_n());
        EXPECT_LE(static_cast<double>(w.settled_count()), bound) << "tick " << t << ", " << w.full_n() << " items";
      }
    }
    EXPECT_EQ(hooks.failures, 0);
    EXPECT_LE(w.CountLow(), uint64_t{W});
    EXPECT_GE(w.CountHigh(), uint64_t{W});
    // Between compactions: up to eight times the settled buckets of the last
    // one, plus 16, plus the unsettled bucket.
    EXPECT_LE(static_cast<double>(w.bucket_count()), 8 * CompactedBound(lambda, W) + 18);
  }
}

// A timestamp with more than kMaxBucketItems items fills several buckets, which
// settle and expire together.
TEST(BucketWindowTest, ATimestampOverTheBucketLimitFillsSeveral) {
  Window w({10, 2}, 0.1);
  CheckingHooks hooks;
  hooks.w = &w;
  ExactCounts exact;
  w.AdvanceTo(5, hooks);
  Add(w, hooks, 5, kMaxBucketItems);
  Add(w, hooks, 5, 7);
  Add(w, hooks, 4, 3);  // late, its own bucket before them
  exact.by_ts[5] = kMaxBucketItems + 7;
  exact.by_ts[4] = 3;
  EXPECT_EQ(w.bucket_count(), 3u);
  EXPECT_EQ(w.full_n(), kMaxBucketItems + 10);
  CheckState(w, exact, hooks);
  w.AdvanceTo(8, hooks);  // 5 < 8 - 2: all three settle
  EXPECT_EQ(w.settled_count(), 3u);
  CheckState(w, exact, hooks);
  w.Compact(hooks);  // a merge would pass kMaxBucketItems
  for (const Bucket& b : w.settled()) EXPECT_LE(b.n, kMaxBucketItems);
  CheckState(w, exact, hooks);
  w.AdvanceTo(15, hooks);  // 5 <= 15 - 10: everything has expired
  EXPECT_EQ(w.bucket_count(), 0u);
  EXPECT_EQ(w.CountHigh(), 0u);
  EXPECT_EQ(hooks.failures, 0);
}

// Restore refuses each kind of broken state its comment lists.
TEST(BucketWindowTest, RestoreRefusesBrokenStates) {
  const WindowSpec spec{10, 2};
  auto bucket = [](int64_t lo, int64_t hi, uint64_t n, double err = 0) {
    Bucket b;
    b.min_ts = lo;
    b.max_ts = hi;
    b.n = n;
    b.err = err;
    return b;
  };
  auto list = [](std::vector<Bucket> v) {
    Window::List l;
    for (Bucket& b : v) l.push_back(std::move(b));
    return l;
  };
  auto restores = [&](int64_t now, std::vector<Bucket> settled, std::vector<Bucket> unsettled) {
    Window w(spec, 0.1);
    return w.Restore(now, list(std::move(settled)), list(std::move(unsettled)));
  };
  // Clock 20: the window is (10, 20], settled buckets end before 18, unsettled in [18, 20].
  EXPECT_TRUE(restores(20, {bucket(8, 12, 5), bucket(13, 15, 4), bucket(16, 16, 1)}, {bucket(18, 18, 2)}));
  EXPECT_TRUE(restores(20, {}, {}));
  EXPECT_FALSE(restores(20, {bucket(13, 15, 4), bucket(14, 16, 4)}, {}));  // ranges overlap
  EXPECT_FALSE(restores(20, {bucket(16, 15, 4)}, {}));                     // min after max
  EXPECT_FALSE(restores(20, {bucket(13, 15, 0)}, {}));                     // empty bucket
  EXPECT_FALSE(restores(20, {bucket(13, 15, 1)}, {}));                     // two times, one item
  EXPECT_FALSE(restores(20, {bucket(5, 10, 4)}, {}));                      // expired bucket kept
  EXPECT_FALSE(restores(20, {bucket(13, 18, 4)}, {}));                     // settled while late items may come
  EXPECT_FALSE(restores(20, {bucket(13, 15, 4, 5.0)}, {}));                // err above n
  EXPECT_FALSE(restores(20, {bucket(13, 15, 4, -1.0)}, {}));               // err below 0
  EXPECT_FALSE(restores(20, {}, {bucket(17, 17, 1)}));                     // unsettled before now - tau
  EXPECT_FALSE(restores(20, {}, {bucket(21, 21, 1)}));                     // unsettled after now
  EXPECT_FALSE(restores(20, {}, {bucket(18, 19, 2)}));                     // unsettled of two times
  EXPECT_FALSE(restores(20, {}, {bucket(19, 19, 1), bucket(18, 18, 1)}));  // out of order
  EXPECT_FALSE(restores(20, {}, {bucket(19, 19, 1), bucket(19, 19, 1)}));  // a timestamp split, not full
  EXPECT_FALSE(restores(kMaxTime + 1, {}, {}));                            // clock out of range
}

}  // namespace
}  // namespace momenta
