// momenta update --follow (tools/update_follow.h): lines applied and
// acknowledged as they arrive, group boundaries, bad lines, record times.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class UpdateFollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = dir_.File("a.npy");
    ASSERT_EQ(RunCli({"create", a_, "--length", "100", "--dtype", "i8"}).exit_code, 0);
  }
  std::string Sum(const std::string& range = "0:100") {
    auto r = RunCli({"query", a_, "--range", range, "--stat", "sum"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  // The log's records as "SEQ TIME INDEX OLD NEW" split into fields.
  std::vector<std::vector<std::string>> LogRecords() {
    auto r = RunCli({"log", a_});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::vector<std::string>> out;
    for (const std::string& line : Lines(r.out)) {
      std::istringstream f(line);
      std::vector<std::string> fields;
      for (std::string x; f >> x;) fields.push_back(x);
      out.push_back(fields);
    }
    return out;
  }
  ScratchDir dir_;
  std::string a_;
};

// A producer that writes a line and waits sees it acknowledged and readable
// before it writes the next: nothing waits for the end of the input.
TEST_F(UpdateFollowTest, EachLineIsAppliedAndAcknowledgedBeforeTheNextArrives) {
  testing::Background update({"update", a_, "--follow", "--ack", "--max-delay", "20ms"}, dir_.path(), "u",
                             /*stdin_pipe=*/true);
  auto wait_acks = [&](size_t n) {
    for (int waited = 0; waited < 20000; waited += 10) {
      if (Lines(update.Out()).size() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  const int64_t before = WallMs();
  ASSERT_TRUE(update.WriteStdin("3 10\n"));
  ASSERT_TRUE(wait_acks(1)) << update.Err();
  EXPECT_EQ(Lines(update.Out())[0], "1 1");
  EXPECT_EQ(Sum(), "sum 10\n");  // a reader sees the acknowledged group while the writer runs
  ASSERT_TRUE(update.WriteStdin("4 -3\n# a comment\n\n"));
  ASSERT_TRUE(wait_acks(2)) << update.Err();
  EXPECT_EQ(Lines(update.Out())[1], "2 1");
  EXPECT_EQ(Sum(), "sum 7\n");
  update.CloseStdin();  // the producer closes its end: the writer closes and exits
  EXPECT_EQ(update.Wait(20000), 0) << update.Err();
  EXPECT_NE(update.Err().find("applied 2 updates"), std::string::npos) << update.Err();
  // Lines without TIME are stamped with the wall clock when they arrived.
  const auto records = LogRecords();
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    ASSERT_EQ(r.size(), 5u);
    EXPECT_GE(std::stoll(r[1]), before);
    EXPECT_LE(std::stoll(r[1]), WallMs());
  }
}

// Groups close at --group updates (and at the end): one acknowledgment each,
// with the last log sequence applied and the group's count.
TEST_F(UpdateFollowTest, GroupsCloseAtTheirSizeAndAtTheEnd) {
  std::string input;
  for (int i = 0; i < 7; ++i) input += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  auto r = RunCli({"update", a_, "--follow", "--ack", "--group", "3", "--max-delay", "1h"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "3 3\n6 3\n7 1\n");
  EXPECT_EQ(Sum(), "sum 28\n");
  // An update that changes no value logs nothing: the sequence stays, the count counts it.
  auto again = RunCli({"update", a_, "--follow", "--ack", "--json"}, "0 1\n");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "{\"seq\":7,\"count\":1}\n");
}

// A bad line stops the stream: the lines before it are applied and
// acknowledged, the ones after it are not, and the message names the line.
TEST_F(UpdateFollowTest, ABadLineStopsAfterTheLinesBeforeIt) {
  auto r = RunCli({"update", a_, "--follow", "--ack", "--max-delay", "1h"}, "1 5\n2 6\n3 x\n4 7\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "2 2\n");
  EXPECT_NE(r.err.find("stdin: line 3"), std::string::npos) << r.err;
  EXPECT_EQ(Sum(), "sum 11\n");
  auto outside = RunCli({"update", a_, "--follow"}, "5 1\n100 1\n");
  EXPECT_NE(outside.exit_code, 0);
  EXPECT_NE(outside.err.find("line 2: index 100 is outside the array"), std::string::npos) << outside.err;
  EXPECT_EQ(Sum(), "sum 12\n");
}

// --on-error skip reports each bad line and goes on.
TEST_F(UpdateFollowTest, SkipReportsBadLinesAndGoesOn) {
  auto r = RunCli({"update", a_, "--follow", "--on-error", "skip"}, "1 5\nnot a line\n2 6\n7 1.5\n3 7\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("line 2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 4:"), std::string::npos) << r.err;  // 1.5 does not fit i8
  EXPECT_NE(r.err.find("skipped 2 bad lines"), std::string::npos) << r.err;
  EXPECT_EQ(Sum(), "sum 18\n");
}

// A line's TIME field wins, then --time, then the arrival clock.
TEST_F(UpdateFollowTest, RecordTimesFromTheLineOrTheFlag) {
  ASSERT_EQ(RunCli({"update", a_, "--follow", "--time", "500"}, "1 5 1234\n2 6\n").exit_code, 0);
  const auto records = LogRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0][1], "1234");
  EXPECT_EQ(records[1][1], "500");
}

TEST_F(UpdateFollowTest, FlagsThatNeedFollowOrConflictAreRefused) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"update", a_, "--ack"},
                                               {"update", a_, "--on-error", "skip"},
                                               {"update", a_, "--follow", "--binary"},
                                               {"update", a_, "--follow", "--group", "0"},
                                               {"update", a_, "--follow", "--on-error", "maybe"},
                                               {"update", a_, "--follow", "--max-delay", "soon"}}) {
    auto r = RunCli(args, "1 1\n");
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_FALSE(r.err.empty());
  }
  EXPECT_EQ(Sum(), "sum 0\n");
}

}  // namespace
}  // namespace momenta
