// Following an update log as a user does: `momenta window --log PATH
// --follow`, `momenta site --log PATH` and `momenta log PATH --tail` started
// before the array exists, a writer (`momenta update PATH --follow --ack`)
// started after them, and every answer checked against the exact count of
// the records the log holds (`momenta log`). Each line sets its own element
// from 0 to a nonzero value, so it logs exactly one record. A follower
// started on a log that has records re-reads the window's records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Background;
using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;
using testing::WaitPortFile;
using Clock = std::chrono::steady_clock;

constexpr double kEps = 0.01;
constexpr int kRounds = 4;
constexpr int kPerRound = 500;
constexpr uint64_t kLength = 100000;

// A number after "key": in a JSON line ("count":12) or "key=12" in a text line.
std::optional<double> NumberAfter(const std::string& line, const std::string& key) {
  for (const std::string& k : {"\"" + key + "\":", key + "="}) {
    const size_t at = line.find(k);
    if (at == std::string::npos) continue;
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) continue;
    return std::strtod(line.c_str() + at + k.size(), nullptr);
  }
  return std::nullopt;
}

// The records in the log of `array`: the exact window count (W is an hour).
size_t LoggedRecords(const std::string& array) {
  auto r = RunCli({"log", array});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Lines(r.out).size();
}

// A writer started after the followers: `update --follow --ack`, fed rounds
// of lines that each set a distinct element, every one acknowledged.
class Writer {
 public:
  Writer(const std::string& array, const std::string& dir, uint64_t seed) : array_(array), rng_(seed) {
    order_.resize(kLength);
    std::iota(order_.begin(), order_.end(), 0);
    std::shuffle(order_.begin(), order_.end(), rng_);
    EXPECT_EQ(RunCli({"create", array, "--length", std::to_string(kLength)}).exit_code, 0);
    process_ = std::make_unique<Background>(std::vector<std::string>{"update", array, "--follow", "--ack"}, dir,
                                            "writer", /*stdin_pipe=*/true);
  }
  // Sends one round and waits for its acknowledgment.
  void Round() {
    std::string text;
    for (int i = 0; i < kPerRound; ++i, ++sent_)
      text += std::to_string(order_[sent_]) + " " + std::to_string(sent_ + 1) + "\n";
    ASSERT_TRUE(process_->WriteStdin(text)) << process_->Err();
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Acked() < sent_ && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(Acked(), sent_) << "writer: " << process_->Out() << process_->Err();
  }
  size_t sent() const { return sent_; }

 private:
  size_t Acked() const {
    size_t acked = 0;
    const std::string out = process_->Out();
    for (const std::string& l : Lines(out.substr(0, out.rfind('\n') + 1))) {
      unsigned long long seq = 0, count = 0;
      if (std::sscanf(l.c_str(), "%llu %llu", &seq, &count) == 2) acked += count;
    }
    return acked;
  }

  const std::string array_;
  std::mt19937_64 rng_;
  std::vector<uint64_t> order_;
  size_t sent_ = 0;
  std::unique_ptr<Background> process_;
};

// Waits until the last report line of `p` counts `exact` within its bounds;
// the last line seen (for the failure message) otherwise.
bool WaitWindowCount(const Background& p, size_t exact, std::string* last) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    const auto lines = Lines(p.Out());
    if (!lines.empty()) {
      *last = lines.back();
      const auto count = NumberAfter(*last, "count"), low = NumberAfter(*last, "count_low"),
                 high = NumberAfter(*last, "count_high");
      if (count && low && high && *low <= exact && exact <= *high &&
          std::abs(*count - static_cast<double>(exact)) <= kEps * static_cast<double>(exact))
        return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<std::string> WindowFollow(const std::string& array) {
  return {"window", "--log", array, "--follow", "--window", "1h", "--eps", std::to_string(kEps), "--json"};
}

TEST(LogFollowTest, WindowFollowCountsEveryRecordOfAWriterStartedAfterIt) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  Background window(WindowFollow(a), dir.path(), "window");
  ASSERT_TRUE(window.WaitErr("waiting for", 10000)) << window.Err();
  Writer writer(a, dir.path(), seed);
  for (int round = 1; round <= kRounds; ++round) {
    writer.Round();
    const size_t exact = LoggedRecords(a);
    ASSERT_EQ(exact, writer.sent());
    std::string last;
    EXPECT_TRUE(WaitWindowCount(window, exact, &last))
        << "round " << round << ": " << exact << " records logged, last report " << last << "\n"
        << window.Err();
    EXPECT_NE(last.find("\"dropped\":0"), std::string::npos) << last;
  }
  window.Kill(SIGTERM);
  EXPECT_EQ(window.Wait(5000), 143) << window.Err();
}

TEST(LogFollowTest, AFollowerStartedOnALogReReadsTheWindowsRecords) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  Writer writer(a, dir.path(), seed);
  writer.Round();
  writer.Round();
  // Its first report counts them all, and nothing more is printed while nothing changes.
  Background window(WindowFollow(a), dir.path(), "window");
  std::string last;
  EXPECT_TRUE(WaitWindowCount(window, writer.sent(), &last)) << last << "\n" << window.Err();
  EXPECT_EQ(Lines(window.Out()).size(), 1u) << window.Out();
  // Then what is logged after it started.
  writer.Round();
  EXPECT_TRUE(WaitWindowCount(window, writer.sent(), &last)) << last << "\n" << window.Err();
  window.Kill(SIGINT);
  EXPECT_EQ(window.Wait(5000), 130) << window.Err();
}

TEST(LogFollowTest, SiteFollowsALogThatAppearsAfterIt) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  Background root({"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", std::to_string(kEps),
                   "--window", "1h"},
                  dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 10000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string at = "127.0.0.1:" + std::to_string(port);
  Background site({"site", "--root", at, "--id", "s1", "--log", a, "--heartbeat", "200ms"}, dir.path(), "site");
  ASSERT_TRUE(site.WaitErr("waiting for", 10000)) << site.Err();
  Writer writer(a, dir.path(), seed);
  for (int round = 1; round <= kRounds; ++round) {
    writer.Round();
    const double exact = static_cast<double>(LoggedRecords(a));
    ASSERT_EQ(exact, static_cast<double>(writer.sent()));
    std::string answer;
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    bool within = false;
    while (!within && Clock::now() < deadline) {
      answer = RunCli({"ask", at, "count"}).out;
      const auto count = NumberAfter(answer, "count");
      within = count && answer.find("sites=1/1") != std::string::npos && std::abs(*count - exact) <= kEps / 24 * exact;
      if (!within) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(within) << "round " << round << ": " << exact << " records logged, root says " << answer << "\n"
                        << site.Err();
  }
  site.Kill(SIGTERM);
  EXPECT_EQ(site.Wait(5000), 143) << site.Err();
}

TEST(LogFollowTest, LogTailWaitsForTheArrayAndPrintsEveryRecord) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  Background tail({"log", a, "--tail"}, dir.path(), "tail");
  ASSERT_TRUE(tail.WaitErr("waiting for", 10000)) << tail.Err();
  Writer writer(a, dir.path(), seed);
  writer.Round();
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Lines(tail.Out()).size() < writer.sent() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(Lines(tail.Out()).size(), writer.sent()) << tail.Err();
  tail.Kill(SIGINT);
  EXPECT_EQ(tail.Wait(5000), 130) << tail.Err();
}

TEST(LogFollowTest, WaitingForALogStopsOnASignal) {
  ScratchDir dir;
  const std::string a = dir.File("never.npy");
  for (const auto& args : std::vector<std::vector<std::string>>{WindowFollow(a), {"log", a, "--tail"}}) {
    Background p(args, dir.path(), args[0]);
    ASSERT_TRUE(p.WaitErr("waiting for", 10000)) << p.Err();
    EXPECT_NE(p.Err().find("no such file yet"), std::string::npos) << p.Err();
    const auto start = Clock::now();
    p.Kill(SIGTERM);
    EXPECT_EQ(p.Wait(5000), 143) << args[0] << ": " << p.Err();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(1)) << args[0];
  }
}

TEST(LogFollowTest, TheWallClockOnALogIsRefusedWhereItWouldDropEverything) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", a, "--length", "10"}).exit_code, 0);
  ASSERT_EQ(RunCli({"update", a}, "1 1\n").exit_code, 0);
  {
    Background refused({"window", "--log", a, "--follow", "--clock", "wall", "--window", "1m", "--eps", "0.1"},
                       dir.path(), "refused");
    EXPECT_EQ(refused.Wait(5000), 2) << refused.Err();
    EXPECT_NE(refused.Err().find("set --tardiness"), std::string::npos) << refused.Err();
    EXPECT_TRUE(refused.Out().empty()) << refused.Out();
  }
  // With a tardiness the wall clock counts the record already in the window (read before the clock starts).
  Background w({"window", "--log", a, "--follow", "--clock", "wall", "--tardiness", "1s", "--window", "1h", "--eps",
                "0.1", "--every", "100ms", "--json"},
               dir.path(), "wall");
  std::string last;
  EXPECT_TRUE(WaitWindowCount(w, 1, &last)) << last << "\n" << w.Err();
  w.Kill(SIGINT);
  EXPECT_EQ(w.Wait(5000), 130) << w.Err();
  // A site on the wall clock, the root's tardiness 0: refused once the root's parameters are known.
  Background root(
      {"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.1", "--window", "1h"},
      dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 10000);
  ASSERT_NE(port, 0) << root.Err();
  {
    Background refused(
        {"site", "--root", "127.0.0.1:" + std::to_string(port), "--id", "w", "--log", a, "--clock", "wall"}, dir.path(),
        "site-refused");
    EXPECT_EQ(refused.Wait(5000), 2) << refused.Err();
    EXPECT_NE(refused.Err().find("--tardiness"), std::string::npos) << refused.Err();
  }
  // With a tardiness, a site on the wall clock counts the record already in the window.
  Background late_root({"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port2"), "--eps", "0.1", "--window",
                        "1h", "--tardiness", "1s"},
                       dir.path(), "late-root");
  const uint16_t port2 = WaitPortFile(dir.File("port2"), 10000);
  ASSERT_NE(port2, 0) << late_root.Err();
  const std::string at = "127.0.0.1:" + std::to_string(port2);
  Background site({"site", "--root", at, "--id", "w", "--log", a, "--clock", "wall", "--heartbeat", "100ms"},
                  dir.path(), "site");
  std::string answer;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    answer = RunCli({"ask", at, "count"}).out;
    if (answer.find("sites=1/1 count=1\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(answer.find("sites=1/1 count=1\n"), std::string::npos) << answer << site.Err();
}

}  // namespace
}  // namespace momenta
