// `momenta ask ... --at T` is reproducible: a site reports time T only once
// nothing stamped <= T can still arrive (stream/window/arrival_hold.h), so two asks
// at the same T, one while T's items are still coming, give the same answer,
// within the documented bound ((eps/24) c) of the exact count of the items
// stamped <= T in the window (T - W, T]. With tardiness tau, an item stamped t
// may arrive until clock t + tau and still counts at t. Also ArrivalHold on
// its own.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include "stream/net/query_client.h"
#include "stream/window/arrival_hold.h"
#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Background;
using testing::RunCli;
using testing::ScratchDir;
using testing::WaitPortFile;

std::string Repeat(const std::string& line, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += line;
  return out;
}

// The answer of a `count` ask: its line, and the count in it.
double CountOf(const std::string& answer) {
  const auto f = AnswerFields(answer.substr(0, answer.find('\n')));
  return f.count("count") ? std::stod(f.at("count")) : -1;
}

struct Monitor {
  explicit Monitor(const ScratchDir& dir, const std::string& tardiness)
      : root({"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.1", "--window", "100",
              "--tardiness", tardiness},
             dir.path(), "root") {
    const uint16_t port = WaitPortFile(dir.File("port"), 5000);
    EXPECT_NE(port, 0) << root.Err();
    addr = "127.0.0.1:" + std::to_string(port);
    site = std::make_unique<Background>(std::vector<std::string>{"site", "--root", addr, "--id", "a", "--input", "-"},
                                        dir.path(), "site", true);
  }
  // Starts `ask count --at T` in the background and gives it time to be
  // asked (it waits at the root, or is answered at once).
  std::unique_ptr<Background> AskLater(const ScratchDir& dir, int64_t t, const std::string& tag) {
    auto ask = std::make_unique<Background>(
        std::vector<std::string>{"ask", addr, "count", "--at", std::to_string(t), "--wait", "8000"}, dir.path(), tag);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return ask;
  }
  Background root;
  std::string addr;
  std::unique_ptr<Background> site;
};

// tau = 0: time 50's 400 items come in two halves with a pause between;
// one ask --at 50 is made during the pause, one after time 51 shows up.
TEST(QueryAtTest, AnswerAtTIsTheSameWhenAskedWhileTsItemsAreComing) {
  ScratchDir dir;
  Monitor m(dir, "0");
  std::string first;
  for (int t = 1; t <= 49; ++t) first += std::to_string(t) + " 7\n";
  ASSERT_TRUE(m.site->WriteStdin(first + Repeat("50 9\n", 200)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the pause: the site is idle mid-tick
  auto early = m.AskLater(dir, 50, "early");
  ASSERT_TRUE(m.site->WriteStdin(Repeat("50 9\n", 200) + "51 3\n"));
  ASSERT_EQ(early->Wait(10000), 0) << early->Err() << m.site->Err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto late = RunCli({"ask", m.addr, "count", "--at", "50"});
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_EQ(early->Out(), late.out);
  EXPECT_EQ(late.out.rfind("as_of=50 sites=1/1 count=", 0), 0u) << late.out;
  const double exact = 49 + 400;  // every item stamped <= 50 is in the window (-50, 50]
  EXPECT_LE(std::abs(CountOf(early->Out()) - exact), 0.1 / 24 * exact) << early->Out();
  // The item stamped 51 is not complete yet (more of 51 may come): not counted.
  EXPECT_NE(RunCli({"ask", m.addr, "sites"}).out.find("a live clock=50 "), std::string::npos);
}

// tau = 3: an item stamped t may arrive until clock t + 3 and still counts
// at t. Time 50 is complete once the data clock passes 53.
TEST(QueryAtTest, LateItemsWithinTheTardinessCountAtTheirTime) {
  ScratchDir dir;
  Monitor m(dir, "3");
  std::string in;
  for (int t = 1; t <= 50; ++t) in += std::to_string(t) + " 7\n";
  in += Repeat("52 8\n", 30) + Repeat("48 5\n", 20);           // 4 late at clock 52: dropped
  ASSERT_TRUE(m.site->WriteStdin(in + Repeat("50 5\n", 25)));  // 2 late: within the tardiness
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto early = m.AskLater(dir, 50, "early");
  ASSERT_TRUE(m.site->WriteStdin(Repeat("49 6\n", 15) + "53\n" + Repeat("50 4\n", 10) + "54\n"));
  ASSERT_EQ(early->Wait(10000), 0) << early->Err() << m.site->Err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto late = RunCli({"ask", m.addr, "count", "--at", "50"});
  ASSERT_EQ(late.exit_code, 0) << late.err;
  EXPECT_EQ(early->Out(), late.out);
  EXPECT_EQ(late.out.rfind("as_of=50 sites=1/1 count=", 0), 0u) << late.out;
  // Stamped <= 50 and not dropped: 50 in order, 25 + 15 + 10 late ones (the
  // "48" ones came 4 late, at clock 52, and were dropped); not the 52s.
  const double exact = 50 + 25 + 15 + 10;
  EXPECT_LE(std::abs(CountOf(late.out) - exact), 0.1 / 24 * exact) << late.out;
}

TEST(QueryAtTest, ArrivalHold) {
  ArrivalHold h(2);
  EXPECT_FALSE(h.Complete());
  EXPECT_TRUE(h.Add(10, 1));
  EXPECT_TRUE(h.Add(12, 2));
  EXPECT_TRUE(h.Add(10, 3));    // 2 late: within tau
  EXPECT_FALSE(h.Add(9, 4));    // 3 late: dropped
  EXPECT_EQ(*h.Complete(), 9);  // 12 - 2 - 1: items stamped 10 may still come
  h.Advance(13);
  EXPECT_EQ(*h.Complete(), 10);
  auto got = h.Take(10);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ts, 10);
  EXPECT_EQ(got[0].item, 1);
  EXPECT_EQ(got[1].ts, 10);
  EXPECT_EQ(got[1].item, 3);
  EXPECT_TRUE(h.Add(11, 5));   // within tau and after the time taken
  EXPECT_FALSE(h.Add(10, 7));  // within tau, but 10 was taken: late
  EXPECT_EQ(h.held(), 2u);
  EXPECT_EQ(h.dropped(), 2u);
  h.Advance(5);  // never back
  EXPECT_EQ(*h.clock(), 13);
  got = h.Take(13);  // the input ended: all of it, in stamp order
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ts, 11);
  EXPECT_EQ(got[1].ts, 12);
  EXPECT_FALSE(h.Add(13, 6));
  EXPECT_EQ(h.dropped(), 3u);
  EXPECT_EQ(h.held(), 0u);
}

}  // namespace
}  // namespace momenta
