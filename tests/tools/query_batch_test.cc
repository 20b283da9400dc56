// momenta query's many-range forms as a user runs them: --ranges from a file
// and from a pipe (each answer before the next line is written), P:Q and
// NDJSON lines, --json, errors that name the line (stop or skip), and --bins
// with and without --snap against per-bin scans.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
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

constexpr int kLength = 10000;

// a_i = (i * 37) % 101 - 50 on [0, 6000), 0 beyond.
long long Cell(long long i) { return i < 6000 ? (i * 37) % 101 - 50 : 0; }
long long SumOf(long long p, long long q) {
  long long s = 0;
  for (long long i = p; i < q; ++i) s += Cell(i);
  return s;
}

class QueryBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = dir_.File("a.npy");
    ASSERT_EQ(RunCli({"create", a_, "--length", std::to_string(kLength), "--dtype", "i8", "--leaf", "64", "--fanout",
                      "4", "--ram-budget", "64K"})
                  .exit_code,
              0);
    std::string lines;
    for (int i = 0; i < 6000; ++i) lines += std::to_string(i) + " " + std::to_string(Cell(i)) + "\n";
    auto u = RunCli({"update", a_}, lines);
    ASSERT_EQ(u.exit_code, 0) << u.err;
  }
  ScratchDir dir_;
  std::string a_;
};

TEST_F(QueryBatchTest, RangesFromAFileInInputOrder) {
  const std::string input =
      "0:10\n\n# a comment\n5000:7000\n{\"range\":[3,3]}\n{\"range\":\"-1:\",\"stat\":\"max\"}\n"
      "{\"range\":[0,10000],\"stat\":[\"count\",\"sum\"]}";  // no final newline
  testing::WriteFileBytes(dir_.File("r.txt"), input);
  auto r = RunCli({"query", a_, "--ranges", dir_.File("r.txt"), "--stat", "sum"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], "0:10 sum " + std::to_string(SumOf(0, 10)));
  EXPECT_EQ(lines[1], "5000:7000 sum " + std::to_string(SumOf(5000, 7000)));
  EXPECT_EQ(lines[2], "3:3 sum 0");
  EXPECT_EQ(lines[3], "9999:10000 max 0");
  EXPECT_EQ(lines[4], "0:10000 count 10000 sum " + std::to_string(SumOf(0, kLength)));
  EXPECT_NE(r.err.find("5 ranges answered"), std::string::npos) << r.err;

  auto j = RunCli({"query", a_, "--ranges", "-", "--stat", "sum", "--stat", "mean", "--json"}, "100:300\n7000:8000\n");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto json = Lines(j.out);
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(
      json[0].rfind(
          "{\"line\":1,\"range\":[100,300],\"stats\":{\"sum\":" + std::to_string(SumOf(100, 300)) + ",\"mean\":", 0),
      0u)
      << json[0];
  EXPECT_EQ(json[1], "{\"line\":2,\"range\":[7000,8000],\"stats\":{\"sum\":0,\"mean\":0}}");
}

TEST_F(QueryBatchTest, ManyRangesAgreeWithOneQueryEach) {
  std::string input;
  std::vector<std::pair<int, int>> ranges;
  for (int k = 0; k < 700; ++k) {  // several batches of 256
    const int p = (k * 7919) % kLength, q = std::min(kLength, p + 1 + (k * 104729) % 3000);
    ranges.push_back({p, q});
    input += std::to_string(p) + ":" + std::to_string(q) + "\n";
  }
  auto r = RunCli({"query", a_, "--ranges", "-", "--stat", "sum", "--stat", "var"}, input + "5:5\n");
  // The var of an empty range fails: the last line, after every other is answered.
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("momenta: Invalid argument: stdin:701: var: the range is empty"), std::string::npos) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), ranges.size());
  for (size_t k = 0; k < ranges.size(); k += 50) {
    auto one = RunCli({"query", a_, "--range", std::to_string(ranges[k].first) + ":" + std::to_string(ranges[k].second),
                       "--stat", "sum", "--stat", "var"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(lines[k], std::to_string(ranges[k].first) + ":" + std::to_string(ranges[k].second) + " " +
                            Lines(one.out)[0] + " " + Lines(one.out)[1]);
    EXPECT_NE(lines[k].find("sum " + std::to_string(SumOf(ranges[k].first, ranges[k].second))), std::string::npos)
        << lines[k];
  }
}

TEST_F(QueryBatchTest, BadLinesAreNamedAndStopOrAreSkipped) {
  const std::string input = "0:10\n10-20\n20:30\n0:99999\n5:5\n";
  auto stop = RunCli({"query", a_, "--ranges", "-", "--stat", "sum"}, input);
  EXPECT_EQ(stop.exit_code, 2) << stop.err;  // malformed text: a usage error
  EXPECT_EQ(Lines(stop.out), std::vector<std::string>{"0:10 sum " + std::to_string(SumOf(0, 10))});
  EXPECT_NE(stop.err.find("stdin:2: '10-20' is not of the form P:Q"), std::string::npos) << stop.err;

  auto skip = RunCli({"query", a_, "--ranges", "-", "--stat", "mean", "--on-error", "skip"}, input);
  EXPECT_EQ(skip.exit_code, 1) << skip.err;
  const auto lines = Lines(skip.out);
  ASSERT_EQ(lines.size(), 5u) << skip.out;
  EXPECT_EQ(lines[0].rfind("0:10 mean ", 0), 0u);
  EXPECT_EQ(lines[1].rfind("error: Invalid argument: stdin:2: '10-20' is not of the form P:Q", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("20:30 mean ", 0), 0u);
  EXPECT_EQ(lines[3].rfind("error: Out of range: stdin:4: '0:99999' is not a range of the array (length 10000)", 0), 0u)
      << lines[3];
  EXPECT_NE(lines[4].find("stdin:5"), std::string::npos) << lines[4];  // the mean of nothing
  EXPECT_NE(skip.err.find("3 lines skipped"), std::string::npos) << skip.err;

  auto json = RunCli({"query", a_, "--ranges", "-", "--stat", "sum", "--on-error", "skip", "--json"}, "7:x\n");
  EXPECT_EQ(Lines(json.out)[0].rfind("{\"line\":1,\"error\":\"Invalid argument: stdin:1: ", 0), 0u) << json.out;

  auto range_too = RunCli({"query", a_, "--range", "0:1", "--ranges", "-", "--stat", "sum"});
  EXPECT_EQ(range_too.exit_code, 2);
  auto missing = RunCli({"query", a_, "--ranges", dir_.File("nope.txt"), "--stat", "sum"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.txt: No such file or directory"), std::string::npos) << missing.err;
}

// From a pipe, each line is answered before the next one is written: a
// script can hold one process open.
TEST_F(QueryBatchTest, APipeGetsEachAnswerAsItsLineArrives) {
  testing::Background query({"query", a_, "--ranges", "-", "--stat", "sum"}, dir_.path(), "q", /*stdin_pipe=*/true);
  auto wait_lines = [&](size_t n) {
    for (int waited = 0; waited < 20000; waited += 10) {
      if (Lines(query.Out()).size() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_TRUE(query.WriteStdin("0:100\n"));
  ASSERT_TRUE(wait_lines(1)) << query.Err();
  ASSERT_TRUE(query.WriteStdin("{\"range\":[100,200]}\n"));
  ASSERT_TRUE(wait_lines(2)) << query.Err();
  const auto lines = Lines(query.Out());
  EXPECT_EQ(lines[0], "0:100 sum " + std::to_string(SumOf(0, 100)));
  EXPECT_EQ(lines[1], "100:200 sum " + std::to_string(SumOf(100, 200)));
}

TEST_F(QueryBatchTest, BinsAgreeWithPerBinScans) {
  auto r =
      RunCli({"query", a_, "--range", "1000:8000", "--bins", "7", "--stat", "sum", "--stat", "min", "--stat", "max"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 7u);
  for (int k = 0; k < 7; ++k) {
    const int lo = 1000 + k * 1000, hi = lo + 1000;
    long long mn = Cell(lo), mx = Cell(lo);
    for (int i = lo; i < hi; ++i) mn = std::min(mn, Cell(i)), mx = std::max(mx, Cell(i));
    EXPECT_EQ(lines[k], std::to_string(lo) + ":" + std::to_string(hi) + " sum " + std::to_string(SumOf(lo, hi)) +
                            " min " + std::to_string(mn) + " max " + std::to_string(mx));
  }
  // Bins one element wide, and uneven ones: edges P + floor(i (Q - P) / K).
  auto ones = RunCli({"query", a_, "--range", "10:13", "--bins", "3", "--stat", "sum"});
  EXPECT_EQ(Lines(ones.out),
            (std::vector<std::string>{"10:11 sum " + std::to_string(Cell(10)), "11:12 sum " + std::to_string(Cell(11)),
                                      "12:13 sum " + std::to_string(Cell(12))}));
  auto uneven = RunCli({"query", a_, "--range", "0:10", "--bins", "3", "--stat", "count", "--json"});
  EXPECT_EQ(Lines(uneven.out), (std::vector<std::string>{"{\"range\":[0,3],\"stats\":{\"count\":3}}",
                                                         "{\"range\":[3,6],\"stats\":{\"count\":3}}",
                                                         "{\"range\":[6,10],\"stats\":{\"count\":4}}"}));
  auto too_many = RunCli({"query", a_, "--range", "0:10", "--bins", "11", "--stat", "sum"});
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("--bins 11: the range 0:10 holds 10 elements"), std::string::npos) << too_many.err;
  EXPECT_EQ(RunCli({"query", a_, "--range", "5:5", "--bins", "1", "--stat", "sum"}).exit_code, 2);
  EXPECT_EQ(RunCli({"query", a_, "--range", "0:10", "--snap", "--stat", "sum"}).exit_code, 2);
}

TEST_F(QueryBatchTest, SnappedBinsReadNoRawElement) {
  // Leaves of 64: edges 1000 + 1000 k snap to the nearest multiple of 64.
  auto r = RunCli(
      {"query", a_, "--range", "1000:9000", "--bins", "8", "--snap", "--stat", "sum", "--stat", "mean", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 8u);
  auto snap = [](int e) { return (e + 31) / 64 * 64; };  // ties go down: 32 past a boundary goes down
  for (int k = 0; k < 8; ++k) {
    const int lo = snap(1000 + 1000 * k), hi = snap(2000 + 1000 * k);
    EXPECT_EQ(lines[k].rfind("{\"range\":[" + std::to_string(lo) + "," + std::to_string(hi) + "],\"asked\":[" +
                                 std::to_string(1000 + 1000 * k) + "," + std::to_string(2000 + 1000 * k) +
                                 "],\"stats\":{\"sum\":" + std::to_string(SumOf(lo, hi)) + ",",
                             0),
              0u)
        << lines[k];
  }
  // With --json the closing line on stderr is a JSON object.
  EXPECT_NE(r.err.find("\"array_bytes_read\":0,"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"edges_moved\":32,\"leaf\":64}"), std::string::npos) << r.err;
  auto text = RunCli({"query", a_, "--range", "1000:9000", "--bins", "8", "--snap", "--stat", "sum"});
  EXPECT_NE(text.err.find("read 0 B from the array"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("edges moved by at most 32 elements"), std::string::npos) << text.err;
  // Bins narrower than a leaf collapse: an empty bin's mean is NaN.
  auto narrow = RunCli({"query", a_, "--range", "0:60", "--bins", "3", "--snap", "--stat", "count", "--stat", "mean"});
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  EXPECT_EQ(
      Lines(narrow.out),
      (std::vector<std::string>{
          "0:0 count 0 mean nan",
          "0:64 count 64 mean " + Lines(RunCli({"query", a_, "--range", "0:64", "--stat", "mean"}).out)[0].substr(5),
          "64:64 count 0 mean nan"}));
}

}  // namespace
}  // namespace momenta
