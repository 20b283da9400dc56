// momenta root / site / ask as processes on loopback: answers with as_of and
// coverage, the root killed (SIGKILL) and restarted on its port while sites
// reconnect and resend their state, finished and stale sites, sites at
// different times (one answer time, as_of), forgetting sites, the token,
// and clear errors for bad input.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <thread>

#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Background;
using testing::RunCli;
using testing::ScratchDir;
using testing::WaitPortFile;
using testing::WriteFileBytes;

// Two sites' inputs, times 1..50: site a sends item 7 at every tick plus
// t % 5, site b item 9 at every tick; a bare "50" line is a tick.
void WriteInputs(const ScratchDir& dir) {
  std::string a, b;
  for (int t = 1; t <= 50; ++t) {
    a += std::to_string(t) + " 7\n" + std::to_string(t) + " " + std::to_string(t % 5) + "\n";
    b += std::to_string(t) + " 9\n";
  }
  WriteFileBytes(dir.File("a.txt"), a);
  WriteFileBytes(dir.File("b.txt"), b + "50\n");
}

// Asks until the answer contains `want` (the state converges after a restart).
bool AskUntil(const std::string& addr, const std::vector<std::string>& query, const std::string& want, int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<std::string> args = {"ask", addr};
    args.insert(args.end(), query.begin(), query.end());
    auto r = RunCli(args);
    if (r.exit_code == 0 && r.out.find(want) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(NetCommandsTest, RootSitesAskAndRestarts) {
  ScratchDir dir;
  WriteInputs(dir);
  auto root =
      std::make_unique<Background>(std::vector<std::string>{"root", "--listen", "127.0.0.1:0", "--port-file",
                                                            dir.File("port"), "--eps", "0.1", "--window", "100"},
                                   dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root->Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  Background a({"site", "--root", addr, "--id", "a", "--input", dir.File("a.txt")}, dir.path(), "a");
  Background b({"site", "--root", addr, "--id", "b", "--input", dir.File("b.txt"), "--heartbeat", "200ms"}, dir.path(),
               "b");
  // 150 items in the window: a count this small is exact; item counts are
  // within (11/24) eps c = 6.9 (both sites must have connected first).
  ASSERT_TRUE(AskUntil(addr, {"sites"}, "sites=2/2", 5000)) << root->Err();
  auto r = RunCli({"ask", addr, "count", "--at", "50"});
  ASSERT_EQ(r.exit_code, 0) << r.err << root->Err();
  EXPECT_EQ(r.out, "as_of=50 sites=2/2 count=150\n");
  r = RunCli({"ask", addr, "frequent", "0.3", "--at", "50", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"as_of\":50,\"sites\":[", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"uncovered\":[],\"count\":150,\"phi\":0.3,\"items\":[{\"item\":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"item\":7,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"item\":9,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("{\"item\":3,"), std::string::npos) << r.out;
  r = RunCli({"ask", addr, "item", "3"});
  ASSERT_EQ(r.out.rfind("as_of=50 sites=2/2 item=3 count=", 0), 0u) << r.out;
  EXPECT_NEAR(std::stod(r.out.substr(r.out.rfind('=') + 1)), 10, 6.9);
  r = RunCli({"ask", addr, "stats"});
  EXPECT_NE(r.out.find("total window_frames="), std::string::npos) << r.out;

  // The root dies and comes back on its port with nothing: the sites
  // reconnect with backoff and resend their state.
  root->Kill(SIGKILL);
  root->Wait(5000);
  root = std::make_unique<Background>(
      std::vector<std::string>{"root", "--listen", addr, "--eps", "0.1", "--window", "100"}, dir.path(), "root2");
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "50"}, "as_of=50 sites=2/2 count=150\n", 15000))
      << root->Err() << a.Err();
  EXPECT_TRUE(a.WaitErr("state resent", 5000)) << a.Err();  // logged after sending: the root may answer first

  // Both inputs ended: the sites are finished, and one that dies then
  // stays so, its final state kept (a site that dies live is stale:
  // LogSiteRestartsFromItsLog, SkewedSitesAnswerForOneTime).
  a.Kill(SIGKILL);
  a.Wait(5000);
  EXPECT_TRUE(AskUntil(addr, {"sites"}, "a finished", 5000));
  r = RunCli({"ask", addr, "count"});
  EXPECT_EQ(r.out, "as_of=50 sites=2/2 count=150\n");
  root->Kill(SIGTERM);
  EXPECT_EQ(root->Wait(5000), 143) << root->Err();
}

// Two sites at different times (docs/monitor.md): A stamps 1000, 2000,
// 3000 (item 1), B 1000 ... 10000 (item 2, ten a stamp), W = 1 min, eps =
// 0.01. While A is at 3000 every answer is for (3000 - W, 3000]: 33 items,
// 30 of item 2 (the root summed B's whole stream: 103 and 100). B's input
// ends (--once): it is finished, kept and counted; a site with no clock yet
// is named, not mixed in; once A ends too the answers move to 10000; a
// finished site can be forgotten, a stale one is forgotten after
// --forget-after.
TEST(NetCommandsTest, SkewedSitesAnswerForOneTime) {
  ScratchDir dir;
  std::string b;
  for (int t = 1000; t <= 10000; t += 1000)
    for (int i = 0; i < 10; ++i) b += std::to_string(t) + " 2\n";
  WriteFileBytes(dir.File("b.txt"), b);
  Background root({"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.01", "--window",
                   "1m", "--forget-after", "300ms"},
                  dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  Background a({"site", "--root", addr, "--id", "A", "--input", "-", "--heartbeat", "100ms"}, dir.path(), "A",
               /*stdin_pipe=*/true);
  ASSERT_TRUE(a.WriteStdin("1000 1\n2000 1\n3000 1\n3001\n"));  // a bare time: 3000 is complete
  ASSERT_TRUE(AskUntil(addr, {"count", "--at", "3000"}, "as_of=3000 sites=1/1 count=3\n", 5000)) << a.Err();
  Background bs({"site", "--root", addr, "--id", "B", "--input", dir.File("b.txt"), "--once"}, dir.path(), "B");
  EXPECT_EQ(bs.Wait(10000), 0) << bs.Err();
  auto r = RunCli({"ask", addr, "count", "--at", "3000"});
  EXPECT_EQ(r.out, "as_of=3000 sites=2/2 count=33\n") << r.err << root.Err();
  r = RunCli({"ask", addr, "item", "2"});
  EXPECT_EQ(r.out, "as_of=3000 sites=2/2 item=2 count=30\n") << r.err;
  EXPECT_TRUE(AskUntil(addr, {"sites"}, "\nB finished clock=", 2000));
  r = RunCli({"ask", addr, "sites"});
  EXPECT_NE(r.out.find(" last_time=10000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nA live clock=3000"), std::string::npos) << r.out;

  // A site with no clock yet: named, not mixed in; `--at` waits for it.
  Background c({"site", "--root", addr, "--id", "C", "--input", "-", "--heartbeat", "100ms"}, dir.path(), "C",
               /*stdin_pipe=*/true);
  ASSERT_TRUE(AskUntil(addr, {"count"}, "as_of=3000 sites=2/3 not_covered=C count=33\n", 5000)) << root.Err();
  r = RunCli({"ask", addr, "count", "--at", "3000", "--wait", "300"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("C(live)"), std::string::npos) << r.err;
  // It dies: stale, then forgotten after --forget-after.
  c.Kill(SIGKILL);
  c.Wait(5000);
  EXPECT_TRUE(AskUntil(addr, {"count"}, "as_of=3000 sites=2/2 count=33\n", 5000)) << root.Err();
  EXPECT_TRUE(root.WaitErr("forgot site C", 5000)) << root.Err();

  // A's input ends: every site finished, the answers move to 10000.
  a.CloseStdin();
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "10000"}, "as_of=10000 sites=2/2 count=103\n", 5000)) << root.Err();
  r = RunCli({"ask", addr, "item", "1"});
  EXPECT_EQ(r.out, "as_of=10000 sites=2/2 item=1 count=3\n");
  EXPECT_EQ(a.Wait(200), -1) << "without --once the site stays: " << a.Err();
  a.Kill(SIGKILL);  // (else it reconnects and is back)
  a.Wait(5000);
  EXPECT_TRUE(AskUntil(addr, {"sites"}, "\nA finished", 5000));
  r = RunCli({"ask", addr, "forget", "A"});
  EXPECT_EQ(r.out, "forgot A\n") << r.err;
  r = RunCli({"ask", addr, "count"});
  EXPECT_EQ(r.out, "as_of=10000 sites=1/1 count=100\n");
  r = RunCli({"ask", addr, "forget", "nobody"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no site named 'nobody'"), std::string::npos) << r.err;
}

// A site tailing an array's update log, killed and started again: it
// re-reads the log and the root's answer is what it was; updates made while
// it was down count too.
TEST(NetCommandsTest, LogSiteRestartsFromItsLog) {
  ScratchDir dir;
  const std::string arr = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", arr, "--length", "1000"}).exit_code, 0);
  ASSERT_EQ(RunCli({"update", arr, "--time", "1000"}, "5 1\n15 1\n25 1\n").exit_code, 0);
  Background root(
      {"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.1", "--window", "1m"},
      dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  auto site = std::make_unique<Background>(
      std::vector<std::string>{"site", "--root", addr, "--id", "a", "--log", arr, "--item", "index/10"}, dir.path(),
      "s1");
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "1000"}, "as_of=1000 sites=1/1 count=3\n", 5000)) << site->Err();
  site->Kill(SIGKILL);
  site->Wait(5000);
  EXPECT_TRUE(AskUntil(addr, {"sites"}, "a stale", 5000));
  ASSERT_EQ(RunCli({"update", arr, "--time", "2000"}, "17 1\n").exit_code, 0);
  site = std::make_unique<Background>(
      std::vector<std::string>{"site", "--root", addr, "--id", "a", "--log", arr, "--item", "index/10"}, dir.path(),
      "s2");
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "2000"}, "as_of=2000 sites=1/1 count=4\n", 5000)) << site->Err();
  auto r = RunCli({"ask", addr, "item", "1"});
  EXPECT_EQ(r.out, "as_of=2000 sites=1/1 item=1 count=2\n");
}

// A site started on a long log begins at its newest record's time minus the
// window (found by bench/kill_driver: it ran the protocol over the whole log,
// so a restart took seconds once the log was ten minutes old); the answer is
// the same, records older than that have left the window.
TEST(NetCommandsTest, LogSiteStartsAtTheLastWindow) {
  ScratchDir dir;
  const std::string arr = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", arr, "--length", "1000"}).exit_code, 0);
  ASSERT_EQ(RunCli({"update", arr, "--time", "1000"}, "5 1\n15 1\n").exit_code, 0);
  ASSERT_EQ(RunCli({"update", arr, "--time", "100000"}, "25 1\n35 1\n").exit_code, 0);
  Background root(
      {"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.1", "--window", "1m"},
      dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  Background site({"site", "--root", addr, "--id", "a", "--log", arr, "--item", "index/10"}, dir.path(), "s");
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "100000"}, "as_of=100000 sites=1/1 count=2\n", 5000)) << site.Err();
  EXPECT_NE(site.Err().find("starting at time 40000 of the log"), std::string::npos) << site.Err();
  // Updates after the start are followed as before.
  ASSERT_EQ(RunCli({"update", arr, "--time", "100500"}, "45 1\n").exit_code, 0);
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "100500"}, "as_of=100500 sites=1/1 count=3\n", 5000)) << site.Err();
}

// A site retries its root at least every 5/8 of its heartbeat, however long
// the root stays down (found by bench/kill_driver: with the backoff's 2 s cap
// alone, a root down for a few seconds waited up to 2.5 s for its sites after
// it came back, many heartbeats); then it resends its state.
TEST(NetCommandsTest, SiteRetriesADeadRootEveryFewEighthsOfAHeartbeat) {
  ScratchDir dir;
  WriteInputs(dir);
  auto root =
      std::make_unique<Background>(std::vector<std::string>{"root", "--listen", "127.0.0.1:0", "--port-file",
                                                            dir.File("port"), "--eps", "0.1", "--window", "100"},
                                   dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root->Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  Background b({"site", "--root", addr, "--id", "b", "--input", dir.File("b.txt"), "--heartbeat", "200ms"}, dir.path(),
               "b");
  ASSERT_TRUE(AskUntil(addr, {"count", "--at", "50"}, "as_of=50 sites=1/1 count=50\n", 5000)) << b.Err();
  root->Kill(SIGKILL);
  root->Wait(5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past several doublings of the backoff
  root = std::make_unique<Background>(
      std::vector<std::string>{"root", "--listen", addr, "--eps", "0.1", "--window", "100"}, dir.path(), "root2");
  EXPECT_TRUE(AskUntil(addr, {"count", "--at", "50"}, "as_of=50 sites=1/1 count=50\n", 15000)) << b.Err();
  // The site logs "state resent" after sending it: the root may answer first.
  EXPECT_TRUE(b.WaitErr("state resent", 5000)) << b.Err();
  EXPECT_NE(b.Err().find("will reconnect (an attempt at least every 125 ms)"), std::string::npos) << b.Err();
}

// The wall clock: items are stamped as they are read and leave the window
// as time passes, with nothing more arriving (the site sends the down events).
TEST(NetCommandsTest, WallClockExpiresWithoutArrivals) {
  ScratchDir dir;
  WriteFileBytes(dir.File("w.txt"), "5\n5\n9\n");
  Background root(
      {"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.1", "--window", "1s"},
      dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  Background site(
      {"site", "--root", addr, "--id", "w", "--input", dir.File("w.txt"), "--clock", "wall", "--heartbeat", "100ms"},
      dir.path(), "site");
  EXPECT_TRUE(AskUntil(addr, {"count"}, "count=3\n", 5000)) << site.Err();
  EXPECT_TRUE(AskUntil(addr, {"count"}, "count=0\n", 5000)) << site.Err();
  auto r = RunCli({"ask", addr, "item", "5"});
  EXPECT_NE(r.out.find(" item=5 count=0\n"), std::string::npos) << r.out;
}

TEST(NetCommandsTest, TokenAndErrors) {
  ScratchDir dir;
  WriteInputs(dir);
  WriteFileBytes(dir.File("token"), "right\n");
  WriteFileBytes(dir.File("wrong"), "wrong\n");
  Background root({"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.05", "--window",
                   "1m", "--token-file", dir.File("token")},
                  dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  auto r =
      RunCli({"site", "--root", addr, "--id", "a", "--input", dir.File("a.txt"), "--token-file", dir.File("wrong")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("refused this site: wrong token"), std::string::npos) << r.err;
  r = RunCli(
      {"site", "--root", addr, "--id", "a", "--input", dir.File("a.txt"), "--token-file", dir.File("token"), "--once"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("eps=0.05 W=60000 tau=0"), std::string::npos) << r.err;

  r = RunCli({"ask", addr, "frequent", "0.01"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("PHI must lie in (eps/2, 1]"), std::string::npos) << r.err;
  r = RunCli({"ask", addr, "bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown query 'bogus'"), std::string::npos) << r.err;
  r = RunCli({"ask", "127.0.0.1:notaport", "count"});
  EXPECT_EQ(r.exit_code, 2);
  r = RunCli({"site", "--root", addr, "--id", "a", "--input", dir.File("missing.txt")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("missing.txt"), std::string::npos) << r.err;
  r = RunCli({"site", "--root", addr, "--id", "bad name!", "--input", dir.File("a.txt")});
  EXPECT_EQ(r.exit_code, 2);
  WriteFileBytes(dir.File("bad.txt"), "1 5\nnot a line\n");
  r = RunCli({"site", "--root", addr, "--id", "c", "--input", dir.File("bad.txt"), "--token-file", dir.File("token")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.txt:2"), std::string::npos) << r.err;
  r = RunCli({"root", "--eps", "2", "--window", "10"});
  EXPECT_EQ(r.exit_code, 2);
  // Nobody listening: the site gives up after its connect timeout.
  r = RunCli(
      {"site", "--root", "127.0.0.1:1", "--id", "a", "--input", dir.File("a.txt"), "--connect-timeout", "200ms"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("connect 127.0.0.1:1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace momenta
