// momenta window: text and NDJSON reports from a 'TIMESTAMP ITEM' stream and
// from an array's update log, --every, tardiness, and clear errors; a random
// stream's reports checked against an exact window.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "stream/testing/exact_window.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

TEST(WindowCommandTest, ReportsEachTickFromStdin) {
  auto r = RunCli({"window", "--input", "-", "--window", "5", "--eps", "0.1", "--top", "2"},
                  "1 5\n1 5\n2 7\n3 5\n3 9\n10 5\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "t=1 count=2 dropped=0 top=5:2 q0.5=5 q0.9=5 q0.99=5\n"
            "t=2 count=3 dropped=0 top=5:2,7:1 q0.5=5 q0.9=7 q0.99=7\n"
            "t=3 count=5 dropped=0 top=5:3,7:1 q0.5=5 q0.9=9 q0.99=9\n"
            "t=10 count=1 dropped=0 top=5:1 q0.5=5 q0.9=5 q0.99=5\n");
}

TEST(WindowCommandTest, EveryReportsExpiryWithoutArrivals) {
  ScratchDir dir;
  WriteFileBytes(dir.File("s.txt"), "1 5\n2 7\n3 5\n20 8\n");
  auto r = RunCli({"window", "--input", dir.File("s.txt"), "--window", "5", "--eps", "0.1", "--every", "4", "--json",
                   "--quantiles", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;  // t = 4, 8, 12, 16, 20
  EXPECT_EQ(lines[0],
            "{\"t\":4,\"count\":3,\"count_low\":3,\"count_high\":3,\"dropped\":0,\"top\":[{\"item\":5,\"count\":2},"
            "{\"item\":7,\"count\":1}],\"quantiles\":[{\"phi\":0.5,\"value\":5}]}");
  EXPECT_NE(lines[1].find("\"t\":8,\"count\":0,"), std::string::npos) << lines[1];  // all expired
  EXPECT_NE(lines[1].find("\"value\":null"), std::string::npos);
  EXPECT_NE(lines[4].find("\"t\":20,\"count\":1,"), std::string::npos) << lines[4];
}

TEST(WindowCommandTest, LateLinesAreDroppedAndReported) {
  auto r = RunCli({"window", "--input", "-", "--window", "10", "--tardiness", "2", "--eps", "0.1"},
                  "10 1\n8 2\n7 3\n11 4\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind("t=10 count=2 dropped=1 ", 0), 0u) << lines[0];  // 8 accepted (2 late), 7 not
  EXPECT_EQ(lines[1].rfind("t=11 count=3 dropped=1 ", 0), 0u) << lines[1];
}

TEST(WindowCommandTest, ItemMappingsOnText) {
  auto r = RunCli({"window", "--input", "-", "--window", "100", "--eps", "0.1", "--item", "index/10", "--top", "3"},
                  "1 15\n1 19\n1 -1\n1 23\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("t=1 count=4 dropped=0 top=1:2,-1:1,2:1 ", 0), 0u) << r.out;
  r = RunCli({"window", "--input", "-", "--window", "100", "--eps", "0.1", "--item", "value/0.5", "--top", "2"},
             "1 0.7\n1 0.9\n1 -0.2\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("t=1 count=3 dropped=0 top=1:2,-1:1 ", 0), 0u) << r.out;
}

// Commands refused before they read stdin get no input: writing to a child
// that has exited would raise SIGPIPE in the test binary.
TEST(WindowCommandTest, ClearErrors) {
  auto r = RunCli({"window", "--window", "5", "--eps", "0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give exactly one of --log PATH or --input FILE|-"), std::string::npos) << r.err;
  r = RunCli({"window", "--input", "-", "--window", "5", "--eps", "1.5"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--eps: eps must lie in (0, 1)"), std::string::npos) << r.err;
  r = RunCli({"window", "--input", "-", "--window", "5", "--tardiness", "5", "--eps", "0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tardiness must lie in [0, W-1]"), std::string::npos) << r.err;
  r = RunCli({"window", "--input", "-", "--window", "5x", "--eps", "0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--window: '5x' is not a duration"), std::string::npos) << r.err;
  r = RunCli({"window", "--input", "-", "--window", "5", "--eps", "0.1", "--item", "cell"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--item: 'cell' is not index, index/G, value/G or name"), std::string::npos) << r.err;
  r = RunCli({"window", "--input", "-", "--window", "5", "--eps", "0.1"}, "1 1\n2 x\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Invalid argument: stdin:2: 'x' is not an integer"), std::string::npos) << r.err;
  r = RunCli({"window", "--input", "/nonexistent/file", "--window", "5", "--eps", "0.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("IO error: /nonexistent/file: No such file or directory"), std::string::npos) << r.err;
  r = RunCli({"window", "--log", "/nonexistent/a.npy", "--window", "5", "--eps", "0.1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Not found:"), std::string::npos) << r.err;
}

TEST(WindowCommandTest, ReadsAnArraysUpdateLog) {
  ScratchDir dir;
  const std::string a = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", a, "--length", "1000"}).exit_code, 0);
  // Time 1000: indices 0..9 (value 0.5), time 1001: index 250 three times (values 7, 7.2, 8.9).
  std::string updates;
  for (int i = 0; i < 10; ++i) updates += std::to_string(i) + " 0.5 1000\n";
  updates += "250 7 1001\n250 7.2 1001\n250 8.9 1001\n";
  auto u = RunCli({"update", a}, updates);
  ASSERT_EQ(u.exit_code, 0) << u.err;
  auto r = RunCli({"window", "--log", a, "--window", "60s", "--eps", "0.1", "--top", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[1].rfind("t=1001 count=13 dropped=0 top=250:3,0:1 q0.5=6 q0.9=250 q0.99=250", 0), 0u) << lines[1];
  r = RunCli({"window", "--log", a, "--window", "60s", "--eps", "0.1", "--item", "index/100", "--top", "2",
              "--quantiles", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("t=1001 count=13 dropped=0 top=0:10,2:3 q0=0"), std::string::npos) << r.out;
  r = RunCli(
      {"window", "--log", a, "--window", "60s", "--eps", "0.1", "--item", "value/1", "--top", "3", "--quantiles", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("t=1001 count=13 dropped=0 top=0:10,7:2,8:1 q1=8"), std::string::npos) << r.out;
}

// Through the CLI, a random stream's last report is within eps of the truth.
TEST(WindowCommandTest, RandomStreamWithinEps) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const double eps = 0.05;
  ExactWindow exact({500, 0});
  std::string input;
  int64_t t = 0;
  for (int i = 0; i < 60000; ++i) {
    t += rng() % 3 == 0;
    const int64_t item = static_cast<int64_t>(std::pow(1.0 + static_cast<double>(rng() % 1000), 1.5)) % 5000;
    exact.Add(t, item);
    input += std::to_string(t) + " " + std::to_string(item) + "\n";
  }
  auto r = RunCli({"window", "--input", "-", "--window", "500", "--eps", "0.05", "--every", "1000000", "--json",
                   "--top", "1", "--quantiles", "0.1,0.5,0.9"},
                  input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), 1u) << r.out;  // t = 0 if the stream starts there, then the end
  ASSERT_LE(lines.size(), 2u) << r.out;
  const std::string& j = lines.back();
  auto field = [&](const std::string& key, size_t from = 0) {
    const size_t at = j.find("\"" + key + "\":", from);
    EXPECT_NE(at, std::string::npos) << key;
    return std::stod(j.substr(at + key.size() + 3));
  };
  const double c = static_cast<double>(exact.count());
  EXPECT_NEAR(field("count"), c, eps * c);
  const double top_item = field("item"), top_count = field("count", j.find("\"top\""));
  EXPECT_NEAR(top_count, static_cast<double>(exact.Count(static_cast<int64_t>(top_item))), eps * c);
  for (double phi : {0.1, 0.5, 0.9}) {
    char key[32];
    std::snprintf(key, sizeof key, "{\"phi\":%g,\"value\":", phi);
    const size_t at = j.find(key);
    ASSERT_NE(at, std::string::npos) << key << " in " << j;
    const int64_t v = std::stoll(j.substr(at + std::strlen(key)));
    EXPECT_TRUE(QuantileOk(exact, v, phi, eps)) << "phi " << phi << " -> " << v;
  }
}

}  // namespace
}  // namespace momenta
