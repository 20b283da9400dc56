// The root against hostile peers over loopback: a site name outside the
// alphabet (sent with the right token) is refused at the handshake and never
// reaches the log raw; many query connections trickling bytes do not keep
// sites or `ask` out.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "stream/net/handshake.h"
#include "stream/net/net_socket.h"
#include "stream/net/wire_frame.h"
#include "tests/assert_ok.h"
#include "tests/cli_background.h"
#include "tests/stream/net/net_test_util.h"

namespace momenta {
namespace {

using testing::RootThread;
using testing::SendRaw;

MonitorParams Params() {
  MonitorParams p;
  p.eps = 0.1;
  p.spec = {60, 0};
  return p;
}

std::string HelloFrame(const std::string& name, const std::string& token) {
  Hello h;
  h.name = name;
  h.token = token;
  return EncodeFrame(FrameType::kHello, EncodeHello(h));
}

TEST(RootLimitsTest, SiteNameOutsideTheAlphabetIsRefusedAndEscaped) {
  RootThread root(Params(), [](RootServerOptions& o) { o.token = "s3cret"; });
  const std::string forged = "east\nsite west connected from 10.0.0.9";
  auto r = SendRaw(root.address(), HelloFrame(forged, "s3cret"), 1000);
  EXPECT_TRUE(r.closed);
  ASSERT_GE(r.reply.size(), kFrameHeaderBytes) << "the root sends REJECT before closing";
  EXPECT_NE(r.reply.find("site name"), std::string::npos);
  for (const std::string& bad : {std::string("a b"), std::string(65, 'x'), std::string("caf\xc3\xa9"),
                                 std::string("nul\0x", 5), std::string("")}) {
    r = SendRaw(root.address(), HelloFrame(bad, "s3cret"), 1000);
    EXPECT_TRUE(r.closed) << EscapeForLog(bad, 100);
  }
  ASSERT_TRUE(root.Logged("east\\x0asite west connected")) << root.Logs();
  const std::string logs = root.Logs();  // "  LINE\n" per logged line
  EXPECT_EQ(logs.find("\n  site west connected"), std::string::npos) << logs;
  EXPECT_FALSE(root.Logged("site east", 0)) << logs;
  // Each refusal is one log line naming the reason.
  const std::string why = "(site, before its handshake): Invalid argument: site name: '";
  size_t refusals = 0;
  for (size_t at = 0; (at = logs.find(why, at)) != std::string::npos; ++at) ++refusals;
  EXPECT_EQ(refusals, 6u) << logs;
  // momenta site refuses to start with such a name, and says so on one line.
  auto cli = testing::RunCli({"site", "--root", "127.0.0.1:1", "--id", forged, "--input", "-"});
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("--id: Invalid argument: site name: 'east\\x0asite west"), std::string::npos) << cli.err;
  EXPECT_EQ(cli.err.find(forged), std::string::npos) << cli.err;
  // A good name still connects.
  r = SendRaw(root.address(), HelloFrame("east-1.b_2", "s3cret"), 300);
  EXPECT_FALSE(r.closed) << root.Logs();
  EXPECT_TRUE(root.Logged("site east-1.b_2 connected")) << root.Logs();
}

// Opens n connections to the root, each sending `first` (query peers that
// never finish their line). Returns those the root accepted and kept so far.
std::vector<Socket> OpenTricklers(const HostPort& root, int n, const std::string& first) {
  std::vector<Socket> out;
  for (int i = 0; i < n; ++i) {
    auto s = ConnectTcp(root, std::chrono::milliseconds(2000));
    if (!s.ok()) continue;
    if (!first.empty()) (void)SendAll(s->fd(), first, std::chrono::milliseconds(200), "root");
    out.push_back(std::move(*s));
  }
  return out;
}

// Sends one more byte on each connection; returns how many the root has closed.
size_t Trickle(std::vector<Socket>& socks) {
  size_t closed = 0;
  for (Socket& s : socks) {
    if (!s.valid()) {
      ++closed;
      continue;
    }
    pollfd p{s.fd(), POLLIN, 0};
    char buf[256];
    if (poll(&p, 1, 0) > 0 && recv(s.fd(), buf, sizeof buf, MSG_DONTWAIT) <= 0) {
      s.Close();
      ++closed;
      continue;
    }
    [[maybe_unused]] ssize_t n = send(s.fd(), "o", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  return closed;
}

// A site connects and `ask count` answers, within a bound.
void ExpectServed(const HostPort& root, const std::string& name, const std::string& when) {
  SCOPED_TRACE(when);
  SiteClientOptions o;
  o.root = root;
  o.name = name;
  o.log = [](const std::string&) {};
  auto c = SiteClient::Create(o);
  ASSERT_OK(c);
  const auto t0 = std::chrono::steady_clock::now();
  Status st = (*c)->ConnectWithin(std::chrono::milliseconds(1500));
  ASSERT_OK(st);
  (*c)->Tick(5, {{5, 1}, {5, 2}});
  (*c)->Flush();
  auto q = QueryClient::Connect(root, std::chrono::milliseconds(1000));
  ASSERT_OK(q);
  auto a = (*q)->Ask("at 5 wait 1000 sites", std::chrono::milliseconds(1500));
  ASSERT_OK(a);
  EXPECT_NE(a->find(name + " live clock=5"), std::string::npos) << *a;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
}

// 520 query connections trickling a byte now and then (more than the whole
// table of 512): sites still connect and `ask` still answers, at once and
// after another round of trickling; the root closes the slow ones.
TEST(RootLimitsTest, TricklingQueriesKeepNeitherSitesNorAskOut) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 2048 && lim.rlim_max >= 2048) {
    lim.rlim_cur = 2048;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (lim.rlim_cur < 2048) GTEST_SKIP() << "needs 2048 file descriptors (the root runs in this process)";
  RootThread root(Params());
  auto socks = OpenTricklers(root.address(), 520, "c");
  ASSERT_GE(socks.size(), 400u);
  ExpectServed(root.address(), "east", "right after 520 trickling connections opened");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Trickle(socks);
  auto more = OpenTricklers(root.address(), 100, "");  // and some that never send a byte
  ExpectServed(root.address(), "west", "after a round of trickling and 100 silent connections");
  // Those still open are within the query limit.
  const size_t max_queries = RootServerOptions().max_queries;
  size_t closed = 0;
  for (int i = 0; i < 40 && closed < socks.size() - max_queries; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    closed = Trickle(socks);
  }
  EXPECT_GE(closed, socks.size() - max_queries) << root.Logs().substr(0, 2000);
  EXPECT_TRUE(root.Logged("evicted for a new query connection")) << root.Logs().substr(0, 2000);
}

// A query line must end within query_line_timeout of its first byte, however
// often bytes trickle in; an idle query connection goes after
// query_idle_timeout.
TEST(RootLimitsTest, SlowQueryLinesAndIdleQueriesAreCut) {
  RootThread root(Params(), [](RootServerOptions& o) {
    o.query_line_timeout = std::chrono::milliseconds(300);
    o.query_idle_timeout = std::chrono::milliseconds(800);
  });
  auto slow = OpenTricklers(root.address(), 1, "c");
  auto idle = OpenTricklers(root.address(), 1, "count\n");
  const auto t0 = std::chrono::steady_clock::now();
  size_t closed = 0;
  while (closed == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2000)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    closed = Trickle(slow);
  }
  EXPECT_EQ(closed, 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  EXPECT_TRUE(root.Logged("query line not complete within 300 ms")) << root.Logs();
  EXPECT_TRUE(root.Logged("query connection idle for 800 ms", 2000)) << root.Logs();
}

TEST(RootLimitsTest, EvictionOrder) {
  RootThread root(Params(), [](RootServerOptions& o) {
    o.max_pending = 2;
    o.max_queries = 3;
    o.max_connections = 8;
  });
  auto closed = [](Socket& s, int wait_ms) {
    pollfd p{s.fd(), POLLIN, 0};
    char buf[512];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (poll(&p, 1, 10) > 0) {
        const ssize_t n = recv(s.fd(), buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN)) return true;
      }
    }
    return false;
  };
  // A site, then two silent connections: the third silent one evicts the first.
  SiteClientOptions so;
  so.root = root.address();
  so.name = "keep";
  so.log = [](const std::string&) {};
  auto site = SiteClient::Create(so);
  ASSERT_OK(site);
  ASSERT_OK((*site)->ConnectWithin(std::chrono::milliseconds(2000)));
  auto silent = OpenTricklers(root.address(), 2, "");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto third = OpenTricklers(root.address(), 1, "");
  EXPECT_TRUE(closed(silent[0], 1000));
  EXPECT_FALSE(closed(silent[1], 100));
  EXPECT_TRUE(root.Logged("evicted for a new connection (2 connections before their handshake"));

  // Three query connections: idle, a slow line, parked.
  auto idle = OpenTricklers(root.address(), 1, "count\n");
  auto slow = OpenTricklers(root.address(), 1, "cou");
  auto parked = OpenTricklers(root.address(), 1, "at 999999 wait 60000 count\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto q4 = OpenTricklers(root.address(), 1, "count\n");
  EXPECT_TRUE(closed(slow[0], 1000)) << root.Logs();
  EXPECT_TRUE(root.Logged("the slowest line goes"));
  auto q5 = OpenTricklers(root.address(), 1, "count\n");
  EXPECT_TRUE(closed(idle[0], 1000)) << root.Logs();
  // Now q4 and q5 are idle too (answered): the longest idle goes next, and
  // the parked one last.
  auto q6 = OpenTricklers(root.address(), 1, "count\n");
  EXPECT_TRUE(closed(q4[0], 1000)) << root.Logs();
  EXPECT_FALSE(closed(parked[0], 100));
  EXPECT_TRUE((*site)->connected());
  (*site)->Heartbeat();
  EXPECT_TRUE(root.Logged("site keep connected"));
  EXPECT_FALSE(root.Logged("(site keep)", 0)) << "the site was never closed: " << root.Logs();
}

// Out of file descriptors, accept(2) fails while the listener stays
// readable: the root used to log that failure on every turn of its loop (a
// busy loop and a flood of lines). Now it takes the waiting connection off
// with a reserve descriptor, closes it, logs once per 10 s, and serves on.
TEST(RootLimitsTest, OutOfFileDescriptorsNeitherSpinsNorFloodsTheLog) {
  testing::ScratchDir dir;
  testing::Background root({"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.1",
                            "--window", "60", "--handshake-timeout", "60000"},
                           dir.path(), "root");
  const uint16_t port = testing::WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0);
  const rlimit small{40, 40};
  ASSERT_EQ(prlimit(root.pid(), RLIMIT_NOFILE, &small, nullptr), 0) << "prlimit: " << std::strerror(errno);
  const HostPort at{"127.0.0.1", port};
  std::vector<Socket> held = OpenTricklers(at, 80, "");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::string err = root.Err();
  size_t lines = 0;
  for (size_t p = 0; (p = err.find("Too many open files", p)) != std::string::npos; ++p) ++lines;
  EXPECT_GE(lines, 1u) << err.substr(0, 2000);
  EXPECT_LE(lines, 2u) << err.substr(0, 2000);
  EXPECT_NE(err.find("(raise the open-file limit, ulimit -n, or lower --max-connections)"), std::string::npos);
  // Once the idle ones are gone, queries are answered.
  held.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto q = QueryClient::Connect(at, std::chrono::milliseconds(2000));
  ASSERT_OK(q);
  auto a = (*q)->Ask("count", std::chrono::milliseconds(3000));
  ASSERT_OK(a);
  EXPECT_EQ(a->rfind("as_of=", 0), 0u) << *a;
}

TEST(RootLimitsTest, EscapeForLog) {
  EXPECT_EQ(EscapeForLog("ok-name", 64), "ok-name");
  EXPECT_EQ(EscapeForLog("a\nb\\'", 64), "a\\x0ab\\\\\\'");
  EXPECT_EQ(EscapeForLog("\xff", 64), "\\xff");
  EXPECT_EQ(EscapeForLog(std::string(10, 'z'), 4), "zzzz...");
  EXPECT_OK(CheckSiteName(std::string(64, 'a')));
  EXPECT_FALSE(CheckSiteName(std::string(65, 'a')).ok());
  EXPECT_EQ(CheckSiteName("x\ny").ToString(),
            "Invalid argument: site name: 'x\\x0ay' (3 bytes): a site name is 1-64 letters, digits, '.', '_' or '-'");
}

}  // namespace
}  // namespace momenta
