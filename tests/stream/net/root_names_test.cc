// Named items through the monitor: sites counting names (SiteClient with
// SiteNames) send the names of the items they turn on in NAMES frames
// (name_frames.h, protocol 4), and the root answers `frequent`, `items` and
// `item NAME` in names (root_names.h), within the bounds of the exact
// window over the items of every site it covers -- also after a site
// reconnects and after the root restarts (the snapshot's names go again).
// The root's and the site's name tables stay bounded by what the synopses
// hold while ever new names stream by. A site without names says protocol 3
// (a root of protocol 3 takes it); one with names says 4 and such a root
// refuses it, saying why. The NAMES frame's golden file
// (tests/data/golden_wire_names_frames_v4.bin) keeps decoding.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stream/net/name_frames.h"
#include "stream/net/query_client.h"
#include "stream/net/root_intake.h"
#include "stream/net/root_names.h"
#include "stream/net/root_state.h"
#include "stream/net/site_client.h"
#include "stream/net/site_names.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_frame.h"
#include "stream/protocol/site.h"
#include "stream/window/item_mapping.h"
#include "tests/assert_ok.h"
#include "tests/stream/net/net_test_util.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::RootThread;

// ---- the wire ---------------------------------------------------------------

const MonitorParams kGoldenParams{0.01, {60000, 5}};
constexpr int64_t kGoldenClock = int64_t{1} << 40;

std::vector<ItemName> GoldenNames() {
  return {
      {NameItem("libc6:amd64"), "libc6:amd64"}, {NameItem("dpkg"), "dpkg"}, {NameItem("n\xc3\xa4me"), "n\xc3\xa4me"}};
}

Message AcSet(int64_t item, uint64_t half_units, int64_t tick) {
  Message m;
  m.type = MessageType::kAcSet;
  m.item = item;
  m.count = half_units;
  m.tick = tick;
  return m;
}

// A protocol-4 site counting names: HELLO v4, NAMES, SNAPSHOT turning the
// named items on, NAMES of one more item, the BATCH turning it on.
std::string GoldenNamesFrames() {
  FrameWriter w;
  const std::vector<ItemName> names = GoldenNames();
  std::string out = w.Encode(FrameType::kHello, EncodeHello({4, "east-1", "tok", kGoldenParams}));
  out += w.Encode(FrameType::kNames, EncodeNames({names[0], names[1]}));
  out += w.Encode(FrameType::kSnapshot, EncodeBatch(kGoldenClock, {AcSet(names[0].item, 40, kGoldenClock),
                                                                   AcSet(names[1].item, 12, kGoldenClock)}));
  out += w.Encode(FrameType::kNames, EncodeNames({names[2]}));
  out += w.Encode(FrameType::kBatch, EncodeBatch(kGoldenClock + 1, {AcSet(names[2].item, 6, kGoldenClock + 1)}));
  return out;
}

std::vector<Frame> Frames(const std::string& bytes) {
  FrameReader r("golden", kDefaultMaxPayload);
  r.Append(bytes.data(), bytes.size());
  std::vector<Frame> out;
  Frame f;
  while (true) {
    auto more = r.Next(&f);
    EXPECT_OK(more);
    if (!more.ok() || !*more) break;
    out.push_back(f);
  }
  return out;
}

TEST(RootNamesFramesTest, GoldenFramesOfProtocolFourDecode) {
  const std::string path = std::string(MOMENTA_TEST_DATA_DIR) + "/golden_wire_names_frames_v4.bin";
  if (const char* dir = std::getenv("MOMENTA_WRITE_NAMES_GOLDEN"); dir != nullptr && *dir != 0) {
    testing::WriteFileBytes(std::string(dir) + "/golden_wire_names_frames_v4.bin", GoldenNamesFrames());
    GTEST_SKIP() << "fixture written";
  }
  const std::string bytes = testing::ReadFileBytes(path);
  EXPECT_TRUE(GoldenNamesFrames() == bytes) << "today's frames differ from protocol 4";
  const std::vector<Frame> f = Frames(bytes);
  ASSERT_EQ(f.size(), 5u);
  auto hello = DecodeHello(f[0].payload);
  ASSERT_OK(hello);
  EXPECT_EQ(hello->version, 4u);
  ASSERT_EQ(f[1].type, FrameType::kNames);
  auto first = DecodeNames(f[1].payload);
  ASSERT_OK(first);
  EXPECT_EQ(*first, (std::vector<ItemName>{GoldenNames()[0], GoldenNames()[1]}));
  EXPECT_EQ(EncodeNames(*first), f[1].payload);
  ASSERT_EQ(f[3].type, FrameType::kNames);
  auto second = DecodeNames(f[3].payload);
  ASSERT_OK(second);
  EXPECT_EQ(*second, std::vector<ItemName>{GoldenNames()[2]});

  // A root takes them and answers in names.
  RootState state(kGoldenParams, 4);
  auto slot = state.Attach("east-1", "golden");
  ASSERT_OK(slot);
  bool synced = false;
  for (size_t i = 1; i < f.size(); ++i)
    ASSERT_EQ(TakeSiteFrame(state, *slot, &synced, f[i], f[i].payload.size() + kFrameHeaderBytes), "") << i;
  for (const ItemName& n : GoldenNames()) EXPECT_EQ(state.names().NameOf(n.item), n.name);
}

TEST(RootNamesFramesTest, DecodeRefusesWhatNoSiteSends) {
  EXPECT_FALSE(DecodeNames("").ok());
  EXPECT_FALSE(DecodeNames(EncodeNames({})).ok());                // no names
  EXPECT_FALSE(DecodeNames(EncodeNames({{1, "a"}}) + "x").ok());  // trailing bytes
  std::string empty_name = EncodeNames({{1, "a"}});
  empty_name[2] = 0;  // the name's length
  EXPECT_FALSE(DecodeNames(empty_name).ok());
  EXPECT_FALSE(DecodeNames(EncodeNames({{1, std::string(kMaxWireName + 1, 'a')}})).ok());
  EXPECT_TRUE(DecodeNames(EncodeNames({{1, std::string(kMaxWireName, 'a')}})).ok());
  // A long name is cut for the wire, never inside a UTF-8 character.
  const std::string long_name = std::string(kMaxWireName - 1, 'a') + "\xc3\xa4";
  EXPECT_EQ(WireName(long_name), std::string(kMaxWireName - 1, 'a'));
}

// Names sent with no state frame after them are bounded: no more than a
// site could turn on at once (SiteMirror::MaxEntries) wait for their frame.
TEST(RootNamesFramesTest, NamesWithoutStateCannotGrowTheRootsTable) {
  MonitorParams p;
  p.eps = 0.1;
  p.spec = WindowSpec{1000, 0};
  RootState state(p, 4);
  auto slot = state.Attach("a", "test");
  ASSERT_OK(slot);
  bool synced = false;
  const size_t cap = SiteMirror::MaxEntries(p.eps);
  uint32_t seq = 0;
  auto names_frame = [&](int64_t first, size_t n) {
    std::vector<ItemName> names;
    for (size_t i = 0; i < n; ++i) {
      const int64_t item = first + static_cast<int64_t>(i);
      names.push_back({item, std::string("n").append(std::to_string(item))});  // not "n" + (GCC 12's -Wrestrict)
    }
    const std::string payload = EncodeNames(names);
    return TakeSiteFrame(state, *slot, &synced, Frame{FrameType::kNames, seq++, payload}, payload.size());
  };
  EXPECT_EQ(names_frame(0, cap), "");
  EXPECT_NE(names_frame(cap, 1).find("names before a frame turning items on"), std::string::npos);
  EXPECT_EQ(state.names().size(), cap);
  // A new connection of the site lets go of what the last one named.
  ASSERT_OK(state.Attach("a", "test"));
  EXPECT_EQ(names_frame(cap, cap), "");
  // Its snapshot turns none of them on: the next prune drops them all.
  const std::string snap = EncodeBatch(5, {});
  EXPECT_EQ(TakeSiteFrame(state, *slot, &synced, Frame{FrameType::kSnapshot, seq++, snap}, snap.size()), "");
  state.names().Prune(state);
  EXPECT_EQ(state.names().size(), 0u);
}

// ---- two sites and a root, over TCP -----------------------------------------

constexpr double kEps = 0.05;
constexpr int64_t kWindow = 1000;
constexpr double kPhi = 0.1;

// Package names as dpkg.log has them, drawn with a skewed popularity that
// differs per site (so the root's answer is not one site's).
class NamedFeed {
 public:
  NamedFeed(uint64_t seed, int site) : rng_(seed * 31 + site), site_(site) {
    for (int i = 0; i < 200; ++i) names_.push_back("lib" + std::to_string(i * 7919 % 1000) + "-pkg:amd64");
  }
  std::string Next() {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    const int rank = static_cast<int>(std::pow(200.0, u * u * u)) - 1;  // rank 0 about a fifth of the time
    return names_[(rank + 37 * site_) % names_.size()];
  }

 private:
  std::mt19937_64 rng_;
  const int site_;
  std::vector<std::string> names_;
};

struct NamedSite {
  std::unique_ptr<SiteClient> client;
  SiteNames names;
  NamedFeed feed;
  std::map<int64_t, std::vector<std::string>> taken;  // tick -> names, for the oracle
  NamedSite(uint64_t seed, int s) : feed(seed, s) {}
};

class NamedMonitor {
 public:
  NamedMonitor(RootThread& root, uint64_t seed) : root_(root) {
    for (int s = 0; s < 2; ++s) {
      sites_.push_back(std::make_unique<NamedSite>(seed, s));
      SiteClientOptions o;
      o.root = root.address();
      o.name = "site" + std::to_string(s);
      o.log = [](const std::string&) {};
      auto c = SiteClient::Create(o);
      EXPECT_OK(c);
      sites_.back()->client = std::move(*c);
      sites_.back()->client->set_names(&sites_.back()->names);
      EXPECT_OK(sites_.back()->client->ConnectWithin(std::chrono::milliseconds(5000)));
    }
    auto q = QueryClient::Connect(root.address(), std::chrono::milliseconds(5000));
    EXPECT_OK(q);
    query_ = std::move(*q);
  }

  void Run(int64_t from, int64_t to) {
    for (int64_t t = from; t <= to; ++t)
      for (auto& s : sites_) {
        std::vector<Arrival> arrivals;
        for (int j = 0; j < 3; ++j) {
          const std::string name = s->feed.Next();
          s->names.Note(NameItem(name), name, t);
          s->taken[t].push_back(name);
          arrivals.push_back({t, NameItem(name)});
        }
        s->client->Tick(t, arrivals);
      }
    for (auto& s : sites_) s->client->Flush();
  }

  // The exact count per name over (t - W, t], both sites.
  std::map<std::string, double> Exact(int64_t t) const {
    std::map<std::string, double> out;
    for (const auto& s : sites_)
      for (auto it = s->taken.upper_bound(t - kWindow); it != s->taken.end() && it->first <= t; ++it)
        for (const std::string& n : it->second) out[n] += 1;
    return out;
  }

  std::string Ask(const std::string& line) {
    if (!query_) {
      auto q = QueryClient::Connect(root_.address(), std::chrono::milliseconds(5000));
      EXPECT_OK(q);
      if (!q.ok()) return "";
      query_ = std::move(*q);
    }
    auto a = query_->Ask(line, std::chrono::milliseconds(15000));
    EXPECT_OK(a);
    if (!a.ok()) query_.reset();
    return a.ok() ? *a : "";
  }

  // Checks frequent, items and item NAME at time t against the exact window.
  void CheckAt(int64_t t) {
    SCOPED_TRACE("at " + std::to_string(t));
    const auto exact = Exact(t);
    double n = 0;
    for (const auto& [name, c] : exact) n += c;
    const std::string freq = Ask("at " + std::to_string(t) + " frequent " + std::to_string(kPhi));
    std::istringstream lines(freq);
    std::string head;
    std::getline(lines, head);
    EXPECT_EQ(head.rfind("as_of=" + std::to_string(t) + " sites=2/2 ", 0), 0u) << freq;
    std::map<std::string, double> got;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string name;
      double c = 0;
      ASSERT_TRUE(words >> name >> c) << line;
      got[name] = c;
      ASSERT_TRUE(exact.count(name)) << "'" << name << "' is no name the sites read (an integer?)\n" << freq;
      EXPECT_LE(std::abs(c - exact.at(name)), kEps * n) << name;
      EXPECT_GE(exact.at(name), (kPhi - kEps) * n) << name << " is not frequent";
    }
    int frequent = 0;
    for (const auto& [name, c] : exact) {
      if (c < kPhi * n) continue;
      ++frequent;
      EXPECT_TRUE(got.count(name)) << name << " (" << c << " of " << n << ") missing from\n" << freq;
      const std::string item = Ask("at " + std::to_string(t) + " item " + name);
      const auto f = AnswerFields(item);
      EXPECT_EQ(f.count("item") ? f.at("item") : "", name) << item;
      EXPECT_LE(std::abs(std::stod(f.count("count") ? f.at("count") : "-1e9") - c), kEps * n) << item;
    }
    EXPECT_GE(frequent, 1) << "the feed has no frequent name: the test checks nothing";
    const std::string json = Ask("at " + std::to_string(t) + " frequent " + std::to_string(kPhi) + " json");
    EXPECT_NE(json.find("\"item\":\"lib"), std::string::npos) << json;
  }

  NamedSite& site(int s) { return *sites_[s]; }

  bool Reconnect(int wait_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      bool all = true;
      for (auto& s : sites_) all = s->client->Reconnect() && all;
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  void DropQuery() { query_.reset(); }
  // Heartbeats until the root lists both sites live (a site learns that its
  // root went away only when it next sends or reads).
  bool WaitBothLive(int wait_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      for (auto& s : sites_) s->client->Heartbeat();
      const std::string sites = Ask("sites");
      size_t live = 0;
      for (size_t at = sites.find(" live "); at != std::string::npos; at = sites.find(" live ", at + 1)) ++live;
      if (live == 2) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  RootThread& root_;
  std::vector<std::unique_ptr<NamedSite>> sites_;
  std::unique_ptr<QueryClient> query_;
};

MonitorParams Params() {
  MonitorParams p;
  p.eps = kEps;
  p.spec = WindowSpec{kWindow, 0};
  return p;
}

TEST(RootNamesTest, TwoSitesAnswerTopFrequentAndItemInNames) {
  const uint64_t seed = 20261204;
  SCOPED_TRACE("seed " + std::to_string(seed));
  RootThread root(Params());
  NamedMonitor m(root, seed);
  m.Run(1, 2500);
  m.CheckAt(2500);
  m.Run(2501, 3100);
  m.CheckAt(3100);
  // The root's table of names, in stats: a few dozen names for 200 packages.
  const std::string answer = m.Ask("stats");
  const size_t total = answer.find("\ntotal ");
  ASSERT_NE(total, std::string::npos) << answer;
  const auto stats = AnswerFields(answer.substr(total + 1, answer.find('\n', total + 1) - total - 1));
  ASSERT_TRUE(stats.count("names"));
  EXPECT_GT(std::stoul(stats.at("names")), 0u);
  EXPECT_LE(std::stoul(stats.at("names")), 200u);
  EXPECT_EQ(stats.at("name_collisions"), "0");
  // A name no site read: its hash, counted 0, said as asked.
  const std::string none = m.Ask("at 3100 item no-such-package");
  EXPECT_NE(none.find("item=no-such-package count=0"), std::string::npos) << none;
}

TEST(RootNamesTest, NamesSurviveSiteReconnectAndRootRestart) {
  const uint64_t seed = 77;
  SCOPED_TRACE("seed " + std::to_string(seed));
  RootThread root(Params());
  NamedMonitor m(root, seed);
  m.Run(1, 1500);
  m.CheckAt(1500);
  // One site's connection drops: it reconnects with its snapshot and names.
  m.site(0).client->Disconnect("test");
  m.Run(1501, 1600);
  ASSERT_TRUE(m.Reconnect(5000));
  m.Run(1601, 1700);
  m.CheckAt(1700);
  // The root restarts with nothing: both sites resend state and names.
  root.Restart();
  m.DropQuery();
  ASSERT_TRUE(m.WaitBothLive(10000));
  m.Run(1701, 1900);
  m.CheckAt(1900);
}

// ---- mixed versions ------------------------------------------------------------

// A root of protocol 3 (as it answered a HELLO: versions 2-3 taken, any
// other refused, finally) on a loopback port, for one connection. Returns
// the HELLO's version.
uint32_t ServeLikeProtocolThree(Socket& listener) {
  pollfd p{listener.fd(), POLLIN, 0};
  if (::poll(&p, 1, 5000) != 1) return 0;  // the listener does not block
  const int fd = ::accept(listener.fd(), nullptr, nullptr);
  if (fd < 0) return 0;
  Socket conn(fd);
  pollfd readable{conn.fd(), POLLIN, 0};
  FrameReader in("site", kMaxHandshakePayload);
  Frame f;
  char buf[1024];
  while (true) {
    auto more = in.Next(&f);
    if (!more.ok()) return 0;
    if (*more) break;
    if (::poll(&readable, 1, 5000) != 1) return 0;
    const ssize_t n = ::recv(conn.fd(), buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return 0;
    in.Append(buf, static_cast<size_t>(n));
  }
  auto hello = DecodeHello(f.payload);
  if (!hello.ok()) return 0;
  FrameWriter out;
  const std::string reply =
      hello->version <= 3
          ? out.Encode(FrameType::kWelcome, EncodeWelcome({kGoldenParams, 0, 1}))
          : out.Encode(FrameType::kReject, EncodeReject("hello: unsupported protocol version " +
                                                            std::to_string(hello->version) + " (this root speaks 2-3)",
                                                        true));
  (void)SendAll(conn.fd(), reply, std::chrono::milliseconds(2000), "site");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return hello->version;
}

TEST(RootNamesTest, SiteWithoutNamesStillSpeaksToAProtocolThreeRootOneWithNamesIsRefusedSaying) {
  for (const bool named : {false, true}) {
    SCOPED_TRACE(named ? "named" : "unnamed");
    uint16_t port = 0;
    auto listener = ListenTcp({"127.0.0.1", 0}, &port);
    ASSERT_OK(listener);
    uint32_t version = 0;
    std::thread root([&] { version = ServeLikeProtocolThree(*listener); });
    SiteClientOptions o;
    o.root = {"127.0.0.1", port};
    o.name = "old-root-site";
    o.log = [](const std::string&) {};
    auto c = SiteClient::Create(o);
    ASSERT_OK(c);
    SiteNames names;
    if (named) (*c)->set_names(&names);
    const Status st = (*c)->ConnectWithin(std::chrono::milliseconds(3000));
    root.join();
    if (!named) {
      EXPECT_EQ(version, 3u);
      EXPECT_OK(st);
    } else {
      EXPECT_EQ(version, 4u);
      EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
      EXPECT_NE(st.ToString().find("unsupported protocol version 4"), std::string::npos) << st.ToString();
    }
  }
}

// ---- bounded tables ----------------------------------------------------------

// One site's frames straight into a RootState (no sockets), as SiteClient
// sends them: the names first, then the batch.
TEST(RootNamesTest, NameTablesStayBoundedAsNamesComeAndGo) {
  MonitorParams p;
  p.eps = 0.1;
  p.spec = WindowSpec{500, 0};
  constexpr size_t kFloor = 64;
  RootState root(p, 4);
  root.names() = RootNames(kFloor);
  SiteOptions so;
  so.spec = p.spec;
  so.eps = p.eps;
  auto site = Site::Create(0, so);
  ASSERT_OK(site);
  SiteMirror mirror(SIZE_MAX);
  SiteNames names(kFloor);
  auto slot = root.Attach("a", "test");
  ASSERT_OK(slot);
  bool synced = false;
  uint32_t seq = 0;
  auto take = [&](FrameType type, const std::string& payload) {
    Frame f{type, seq++, payload};
    ASSERT_EQ(TakeSiteFrame(root, *slot, &synced, f, payload.size()), "");
  };
  take(FrameType::kSnapshot, EncodeBatch(0, {}));
  size_t max_root = 0, max_site = 0, max_held = 0;
  std::vector<Message> out;
  for (int64_t t = 1; t <= 20000; ++t) {
    // Five hot names per epoch of 1000 ticks, and a name never seen again.
    const std::string hot = "epoch" + std::to_string(t / 1000) + "-" + std::to_string(t % 5);
    const std::string cold = "cold" + std::to_string(t);
    std::vector<Arrival> arrivals;
    for (const std::string& n : {hot, hot, cold}) {
      names.Note(NameItem(n), n, t);
      arrivals.push_back({t, NameItem(n)});
    }
    out.clear();
    (*site)->Tick(t, arrivals, &out);
    for (const Message& m : out) ASSERT_OK(mirror.Apply(m));
    names.Prune(**site, mirror, t);
    for (const auto& chunk : names.NamesFor(out, false)) take(FrameType::kNames, EncodeNames(chunk));
    take(FrameType::kBatch, EncodeBatch(t, out));
    size_t held = mirror.items();
    (*site)->items()->ForEachCandidate([&](int64_t) { ++held; });
    max_held = std::max(max_held, held);
    max_root = std::max(max_root, root.names().size());
    max_site = std::max(max_site, names.size());
    // Every item the root may report has its name.
    for (const ItemEstimate& e : root.Items()) ASSERT_NE(root.names().NameOf(e.item), "") << "t=" << t;
  }
  // 20000 cold names and 100 hot ones went by; the tables held about what
  // the synopses hold.
  EXPECT_LE(max_root, 2 * std::max(kFloor, max_held) + 3) << "held " << max_held;
  EXPECT_LE(max_site, 2 * std::max(kFloor, max_held) + 3) << "held " << max_held;
  EXPECT_EQ(root.names().NameOf(NameItem("epoch0-1")), "");  // left every synopsis long ago
  EXPECT_EQ(root.names().NameOf(NameItem("epoch19-1")), "epoch19-1");
  EXPECT_EQ(root.names().collisions(), 0u);
  std::printf("names: root held at most %zu, site %zu; synopses at most %zu items\n", max_root, max_site, max_held);
}

}  // namespace
}  // namespace momenta
