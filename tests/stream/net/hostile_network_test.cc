// The monitor through a hostile network: four sites in lockstep,
// s0 and s1 through a HostileProxy that delays, stalls, cuts mid-frame,
// duplicates whole frames or flips bits (each alone, then all at once), s2
// and s3 straight to the root. At every tick the root's answers -- count,
// per-site counts, every item it holds, frequent items, quantiles -- are
// checked against exact windows over what the sites each answer says it
// covers were given (LockstepRun::Check): a site is covered and within eps,
// or it is named not covered. The direct sites stay covered throughout and
// `at T` queries keep being answered (a stalled peer delays them by its
// stall, a dead one not at all); with the faults off, the hostile sites
// come back and are covered again. A peer's huge length prefix is refused
// without the allocation it asks for.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "stream/net/handshake.h"
#include "stream/net/net_socket.h"
#include "stream/net/wire_frame.h"
#include "tests/assert_ok.h"
#include "tests/stream/net/hostile_proxy.h"
#include "tests/stream/net/net_test_util.h"

namespace momenta {
namespace {

using testing::HostileFaults;
using testing::HostileProxy;
using testing::LockstepRun;
using testing::RootThread;

constexpr uint32_t kSites = 4, kHostile = 2;  // s0, s1 through the proxy

MonitorParams Params() {
  MonitorParams p;
  p.eps = 0.1;
  p.spec = {60, 0};
  return p;
}

void Tight(RootServerOptions& o) {
  // A corrupted first byte makes a site look like a query peer: the root
  // gives up on its "line" soon.
  o.query_line_timeout = std::chrono::milliseconds(300);
  o.handshake_timeout = std::chrono::milliseconds(2000);
}

struct Outcome {
  testing::HostileCounts counts;
  uint64_t checks = 0;
  std::vector<uint64_t> covered;
  uint64_t probes = 0, probes_while_stalled = 0;
};

// Asks the root a plain `count` (no `at`: answered with what it holds) every
// few ms from its own connection while a run goes on; every probe must be
// answered within a generous bound, whatever a peer does.
class Prober {
 public:
  Prober(const HostPort& root, const HostileProxy& proxy) {
    thread_ = std::thread([this, root, &proxy] {
      auto q = QueryClient::Connect(root, std::chrono::milliseconds(3000));
      if (!q.ok()) {
        failures_ = 1;
        return;
      }
      while (!stop_) {
        const bool stalled = proxy.stalled();
        const auto t0 = std::chrono::steady_clock::now();
        auto a = (*q)->Ask("count", std::chrono::milliseconds(3000));
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
        if (!a.ok() || a->rfind("as_of=", 0) != 0) {
          ++failures_;
          return;
        }
        ++probes_;
        if (stalled) ++while_stalled_;
        max_us_ = std::max<int64_t>(max_us_, us.count());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~Prober() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t probes() const { return probes_; }
  uint64_t while_stalled() const { return while_stalled_; }
  uint64_t failures() const { return failures_; }
  int64_t max_us() const { return max_us_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> probes_{0}, while_stalled_{0}, failures_{0};
  std::atomic<int64_t> max_us_{0};
  std::thread thread_;
};

// Runs `ticks` checked ticks with the faults on, then turns them off and
// runs until every site is covered again, and 30 ticks more.
Outcome RunHostile(const HostileFaults& faults, const std::string& workload, int64_t ticks,
                   RootThread* root_out = nullptr) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("faults " + faults.ToString() + " seed " + std::to_string(seed));
  RootThread own(Params(), Tight);
  RootThread& root = root_out ? *root_out : own;
  HostileProxy proxy(root.address(), faults, seed);
  proxy.set_enabled(false);  // the first handshakes go through: ConnectWithin gives up on a refusal
  LockstepRun run(root, kSites, workload, 20, seed, "",
                  [&](uint32_t s) { return s < kHostile ? proxy.address() : root.address(); });
  proxy.set_enabled(true);
  Prober prober(root.address(), proxy);
  int64_t t = 0;
  for (; t < ticks; ++t) run.Step(t);
  prober.Stop();
  Outcome out;
  out.counts = proxy.counts();
  out.probes = prober.probes();
  out.probes_while_stalled = prober.while_stalled();
  EXPECT_EQ(prober.failures(), 0u) << "a plain query went unanswered for 3 s";
  EXPECT_GT(prober.probes(), 0u);
  // Faults off: the hostile sites reconnect (backoff) and resync.
  proxy.set_enabled(false);
  const uint64_t before = run.checks();
  for (int i = 0; i < 400; ++i, ++t) {
    const uint64_t partial_before = run.partial_ticks();
    run.Step(t);
    bool all = run.checks() > before && run.partial_ticks() == partial_before;  // this tick covered all four
    for (uint32_t s = 0; s < kHostile; ++s) all = all && run.client(s)->connected();
    if (all) {
      ++t;  // tick t is done: never stepped twice
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (uint32_t s = 0; s < kHostile; ++s) EXPECT_TRUE(run.client(s)->connected()) << "s" << s;
  const uint64_t partial = run.partial_ticks();
  for (const int64_t end = t + 30; t < end; ++t) run.Step(t);
  EXPECT_EQ(run.partial_ticks(), partial) << "all four covered once the faults stopped";
  EXPECT_EQ(run.violations(), 0u) << "seed=" << seed << run.first_violations() << "\n" << out.counts.ToString();
  // The direct sites never lost their connection and were in every answer.
  for (uint32_t s = kHostile; s < kSites; ++s) {
    EXPECT_EQ(run.client(s)->connections(), 1u) << "s" << s;
    EXPECT_EQ(run.covered_ticks(s), run.checks()) << "s" << s;
  }
  out.checks = run.checks();
  for (uint32_t s = 0; s < kSites; ++s) out.covered.push_back(run.covered_ticks(s));
  std::printf(
      "  seed %llu %s: %s; checked ticks %llu, covered s0 %llu s1 %llu; probes %llu (%llu while stalled), slowest %lld "
      "us\n",
      static_cast<unsigned long long>(seed), faults.ToString().c_str(), out.counts.ToString().c_str(),
      static_cast<unsigned long long>(out.checks), static_cast<unsigned long long>(out.covered[0]),
      static_cast<unsigned long long>(out.covered[1]), static_cast<unsigned long long>(out.probes),
      static_cast<unsigned long long>(out.probes_while_stalled), static_cast<long long>(prober.max_us()));
  return out;
}

TEST(HostileNetworkTest, Delays) {
  HostileFaults f;
  f.delay = true;
  f.chance = 0.5;
  const Outcome o = RunHostile(f, "burst", 150);
  EXPECT_GT(o.counts.delayed, 0u);
  // Delays alone lose nothing: the hostile sites stay covered throughout.
  EXPECT_EQ(o.covered[0], o.checks);
  EXPECT_EQ(o.covered[1], o.checks);
}

TEST(HostileNetworkTest, StallsHoldNeitherQueriesNorOtherSites) {
  HostileFaults f;
  f.stall = true;
  f.chance = 0.04;
  const Outcome o = RunHostile(f, "square", 150);
  EXPECT_GT(o.counts.stalls, 0u);
  EXPECT_GT(o.probes_while_stalled, 0u) << "plain queries were answered while a peer was stalled";
  EXPECT_EQ(o.covered[0], o.checks) << "a stall loses nothing";
}

TEST(HostileNetworkTest, CutsMidFrame) {
  HostileFaults f;
  f.cut = true;
  f.chance = 0.04;
  const Outcome o = RunHostile(f, "rotation", 200);
  EXPECT_GT(o.counts.cuts, 0u);
  EXPECT_GT(o.counts.connections, 2u) << "the cut sites reconnected through the proxy";
}

TEST(HostileNetworkTest, DuplicatedFramesAppliedOnce) {
  HostileFaults f;
  f.duplicate = true;
  f.chance = 0.2;
  RootThread root(Params(), Tight);
  const Outcome o = RunHostile(f, "steady", 150, &root);
  EXPECT_GT(o.counts.duplicated, 0u);
  // Dropped by their sequence, on the same connection: never a resync.
  EXPECT_EQ(o.counts.connections, kHostile);
  EXPECT_EQ(o.covered[0], o.checks);
  EXPECT_TRUE(root.Logged("dropped a frame delivered twice")) << root.Logs();
}

TEST(HostileNetworkTest, CorruptedBytesAreCaught) {
  HostileFaults f;
  f.corrupt = true;
  f.chance = 0.04;
  RootThread root(Params(), Tight);
  const Outcome o = RunHostile(f, "burst", 200, &root);
  EXPECT_GT(o.counts.corrupted, 0u);
  EXPECT_GT(o.counts.connections, 2u);
  // Every flip was caught by a check of the frame, not by luck in a decoder.
  EXPECT_TRUE(root.Logged("checksum mismatch") || root.Logged("bad frame magic") ||
              root.Logged("unsupported protocol version") || root.Logged("unknown frame type"))
      << root.Logs();
}

TEST(HostileNetworkTest, EverythingAtOnce) {
  HostileFaults f;
  f.delay = f.stall = f.cut = f.duplicate = f.corrupt = true;
  f.chance = 0.03;
  const Outcome o = RunHostile(f, "burst", 250);
  EXPECT_GT(o.counts.frames, 0u);
}

// A HELLO damaged on the way is refused by the root (checksum), but that
// refusal is of the connection, not the site: the site retries (it used to
// give up at once, as for a wrong token, so `momenta site` exited on one
// flipped bit at start). A wrong token still ends the wait at once.
TEST(HostileNetworkTest, DamagedHelloIsRetriedWrongTokenIsNot) {
  RootThread root(Params(), [](RootServerOptions& o) {
    Tight(o);
    o.token = "s3cret";
  });
  HostileFaults f;
  f.corrupt = true;
  f.chance = 1.0;          // every frame the site sends
  f.root_to_site = false;  // the REJECT arrives intact
  HostileProxy proxy(root.address(), f, testing::TestSeed());
  SiteClientOptions o;
  o.root = proxy.address();
  o.name = "east";
  o.token = "s3cret";
  o.backoff_min = std::chrono::milliseconds(10);
  o.backoff_max = std::chrono::milliseconds(20);
  // A flipped first byte makes the HELLO look like a query line to the root,
  // which waits for its end: the site's wait for WELCOME is cut short.
  o.io_timeout = std::chrono::milliseconds(300);
  o.log = [](const std::string&) {};
  auto c = SiteClient::Create(o);
  ASSERT_OK(c);
  Status st = (*c)->ConnectWithin(std::chrono::milliseconds(1200));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_GT(proxy.counts().connections, 2u) << "it kept trying";
  // Undamaged, it connects.
  proxy.set_enabled(false);
  ASSERT_OK((*c)->ConnectWithin(std::chrono::milliseconds(2000)));
  // The wrong token is final.
  o.root = root.address();
  o.token = "guess";
  auto bad = SiteClient::Create(o);
  ASSERT_OK(bad);
  const auto t0 = std::chrono::steady_clock::now();
  st = (*bad)->ConnectWithin(std::chrono::milliseconds(5000));
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.ToString().find("refused this site: wrong token"), std::string::npos) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(4000)) << "no retries";
}

// A peer announcing a huge payload: refused from the header, before and
// after its handshake, with no allocation of what it announced, while a site
// keeps streaming and queries are answered.
TEST(HostileNetworkTest, HugeLengthPrefixRefusedWithoutAllocating) {
  const uint64_t seed = testing::TestSeed();
  RootThread root(Params());
  LockstepRun run(root, 2, "steady", 20, seed);
  int64_t t = 0;
  for (; t < 20; ++t) run.Step(t);
  const size_t mapped_before = mallinfo2().hblkhd;
  // Before any handshake: the cap is a HELLO's.
  auto r = testing::SendRaw(root.address(), EncodeFrameHeader(FrameType::kHello, 0xfffffff0u, 0, 0), 2000);
  EXPECT_TRUE(r.closed);
  EXPECT_TRUE(root.Logged("frame of 4294967280 bytes over the cap of " + std::to_string(kMaxHandshakePayload)))
      << root.Logs();
  // A welcomed site: the cap is max_payload.
  Hello h;
  h.name = "greedy";
  r = testing::SendRaw(
      root.address(),
      EncodeFrame(FrameType::kHello, EncodeHello(h), 0) + EncodeFrameHeader(FrameType::kSnapshot, 0xfffffff0u, 1, 0),
      2000);
  EXPECT_TRUE(r.closed);
  EXPECT_TRUE(root.Logged("(site greedy): Corruption: ")) << root.Logs();
  EXPECT_TRUE(root.Logged("over the cap of " + std::to_string(kDefaultMaxPayload))) << root.Logs();
  // Neither asked for 4 GiB (nor anything near): a generous bound on what
  // malloc mapped meanwhile, untouched pages included.
  EXPECT_LT(mallinfo2().hblkhd, mapped_before + (64u << 20));
  for (; t < 60; ++t) run.Step(t);
  EXPECT_EQ(run.client(0)->connections(), 1u);
  EXPECT_EQ(run.violations(), 0u) << "seed=" << seed << run.first_violations();
}

}  // namespace
}  // namespace momenta
