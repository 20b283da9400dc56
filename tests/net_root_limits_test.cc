// The root against hostile peers over loopback: a site name outside the
// alphabet (sent with the right token) is refused at the handshake and never
// reaches the log raw; many query connections trickling bytes do not keep
// sites or `ask` out.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "stream/handshake.h"
#include "stream/net_socket.h"
#include "stream/wire_frame.h"
#include "tests/net_test_util.h"

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

TEST(NetRootLimitsTest, SiteNameOutsideTheAlphabetIsRefusedAndEscaped) {
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
  ASSERT_TRUE(c.ok());
  const auto t0 = std::chrono::steady_clock::now();
  Status st = (*c)->ConnectWithin(std::chrono::milliseconds(1500));
  ASSERT_TRUE(st.ok()) << st.ToString();
  (*c)->Tick(5, {{5, 1}, {5, 2}});
  (*c)->Flush();
  auto q = QueryClient::Connect(root, std::chrono::milliseconds(1000));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  auto a = (*q)->Ask("at 5 wait 1000 sites", std::chrono::milliseconds(1500));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NE(a->find(name + " live clock=5"), std::string::npos) << *a;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
}

// 520 query connections trickling a byte now and then (more than the whole
// table of 512): sites still connect and `ask` still answers, at once and
// after another round of trickling; the root closes the slow ones.
TEST(NetRootLimitsTest, TricklingQueriesKeepNeitherSitesNorAskOut) {
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
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  const size_t closed = Trickle(socks);
  // Those still open are inside the query limit, and their lines are young.
  EXPECT_GE(closed, socks.size() - RootServerOptions{}.max_queries) << root.Logs().substr(0, 2000);
  EXPECT_TRUE(root.Logged("evicted for a new query connection")) << root.Logs().substr(0, 2000);
  EXPECT_TRUE(root.Logged("query line not complete within 2000 ms")) << root.Logs().substr(0, 2000);
}

TEST(NetRootLimitsTest, EscapeForLog) {
  EXPECT_EQ(EscapeForLog("ok-name", 64), "ok-name");
  EXPECT_EQ(EscapeForLog("a\nb\\'", 64), "a\\x0ab\\\\\\'");
  EXPECT_EQ(EscapeForLog("\xff", 64), "\\xff");
  EXPECT_EQ(EscapeForLog(std::string(10, 'z'), 4), "zzzz...");
  EXPECT_TRUE(CheckSiteName(std::string(64, 'a')).ok());
  EXPECT_FALSE(CheckSiteName(std::string(65, 'a')).ok());
  EXPECT_EQ(CheckSiteName("x\ny").ToString(),
            "Invalid argument: site name: 'x\\x0ay' (3 bytes): a site name is 1-64 letters, digits, '.', '_' or '-'");
}

}  // namespace
}  // namespace momenta
