// --buffer ola through the CLI: create, build and import choose it; query
// answers index-moment statistics from it and value statistics from the
// order-0 tree beside it; info and verify show it; orders it cannot serve,
// non-finite updates and --bin without ola are refused with one line.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <string>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::RunCli;
using testing::ScratchDir;

double Field(const std::string& out, const std::string& stat, int k = 0) {
  // "stat v1 v2 ..." lines
  size_t at = out.find(stat + " ");
  EXPECT_NE(at, std::string::npos) << out;
  if (at == std::string::npos) return NAN;
  at += stat.size() + 1;
  for (int j = 0; j < k; ++j) at = out.find(' ', at) + 1;
  return std::stod(out.substr(at));
}

class OlaCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = dir_.File("a.npy");
    auto c = RunCli({"create", a_, "--length", "100000", "--buffer", "ola", "--order", "3", "--bin", "64"});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    // a_i = (i mod 7) − 3 for i in [1000, 61000), else 0
    std::string lines;
    for (int i = 1000; i < 61000; ++i) lines += std::to_string(i) + " " + std::to_string(i % 7 - 3) + "\n";
    auto u = RunCli({"update", a_}, lines);
    ASSERT_EQ(u.exit_code, 0) << u.err;
  }
  // Σ_{i∈[p,q)} (i − p)^t a_i in long double.
  static long double Moment(uint64_t p, uint64_t q, int t) {
    long double m = 0;
    for (uint64_t i = std::max<uint64_t>(p, 1000); i < std::min<uint64_t>(q, 61000); ++i)
      m += std::pow(static_cast<long double>(i - p), t) * static_cast<long double>(static_cast<int>(i % 7) - 3);
    return m;
  }
  ScratchDir dir_;
  std::string a_;
};

TEST_F(OlaCommandsTest, IndexMomentsFromOlaValuesFromTheTree) {
  for (const auto& [p, q] :
       std::vector<std::pair<uint64_t, uint64_t>>{{0, 100000}, {17, 90001}, {999, 1003}, {60990, 61010}}) {
    SCOPED_TRACE(std::to_string(p) + ":" + std::to_string(q));
    auto r = RunCli({"query", a_, "--range", std::to_string(p) + ":" + std::to_string(q), "--stat", "sum", "--stat",
                     "moments", "--order", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NEAR(Field(r.out, "sum"), static_cast<double>(Moment(p, q, 0)), 1e-6);
    for (int t = 0; t <= 3; ++t) {
      // The bound's magnitude here is below Σ (q − p)^t · 3 over the range.
      const long double scale = 3 * std::pow(static_cast<long double>(q - p), t + 1);
      EXPECT_NEAR(Field(r.out, "moments", t), static_cast<double>(Moment(p, q, t)), 1e-9 * scale) << "t " << t;
    }
  }
  auto v = RunCli({"query", a_, "--range", "1000:1007", "--stat", "var", "--stat", "min", "--stat", "max"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_DOUBLE_EQ(Field(v.out, "var"), 4.0);  // −3..3 once each around 1000 (1000 % 7 = 6)
  EXPECT_EQ(Field(v.out, "min"), -3);
  EXPECT_EQ(Field(v.out, "max"), 3);
  auto high = RunCli({"query", a_, "--range", "0:10", "--stat", "moment", "--order", "4"});
  EXPECT_NE(high.exit_code, 0);
}

// --progressive on an Ola array refines coarse to fine through its levels
// (ola_progressive.h): every interval holds the exact answer, no line before
// the last reads a cell of the array, the last line is exact.
TEST_F(OlaCommandsTest, ProgressiveSumsRefineThroughTheOlaLevels) {
  // Freshly built (the fixture's updates would send the bounds to the tree's leaves: ola_progressive.h).
  ASSERT_EQ(RunCli({"build", a_, "--buffer", "ola", "--order", "3", "--bin", "64"}).exit_code, 0);
  auto r = RunCli({"query", a_, "--range", "517:60321", "--stat", "sum", "--progressive", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double exact = static_cast<double>(Moment(517, 60321, 0));
  const auto lines = testing::Lines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  for (const std::string& line : lines) {
    const double lower = std::stod(line.substr(line.find("\"lower\":") + 8));
    const double upper = std::stod(line.substr(line.find("\"upper\":") + 8));
    EXPECT_LE(lower, exact) << line;
    EXPECT_GE(upper, exact) << line;
    if (&line != &lines.back()) {
      EXPECT_NE(line.find("\"array_bytes_read\":0,"), std::string::npos) << line;
    }
  }
  EXPECT_NE(lines.back().find("\"exact\":true"), std::string::npos) << lines.back();
}

// --ranges and --bins on an Ola array answer index statistics from the Ola
// buffer alone: each line equals the single query's (which reads the Ola file alone).
TEST_F(OlaCommandsTest, BatchesAnswerAsTheSingleQueryDoes) {
  const std::vector<std::string> ranges = {"0:100000", "517:60321", "999:1001", "60990:61010", "5:6"};
  std::string in;
  for (const auto& r : ranges) in += r + "\n";
  auto batch = RunCli({"query", a_, "--ranges", "-", "--stat", "sum", "--stat", "mean", "--stat", "moments"}, in);
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  const auto lines = testing::Lines(batch.out);
  ASSERT_EQ(lines.size(), ranges.size()) << batch.out;
  for (size_t k = 0; k < ranges.size(); ++k) {
    auto one = RunCli({"query", a_, "--range", ranges[k], "--stat", "sum", "--stat", "mean", "--stat", "moments"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    std::string flat = one.out.substr(0, one.out.size() - 1);  // one stat a line: on one line, as a batch prints it
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    EXPECT_EQ(lines[k], ranges[k] + " " + flat);
  }
  auto bins = RunCli({"query", a_, "--range", "0:70000", "--bins", "7", "--stat", "sum", "--json"});
  ASSERT_EQ(bins.exit_code, 0) << bins.err;
  for (int b = 0; b < 7; ++b) {
    const double exact = static_cast<double>(Moment(b * 10000, (b + 1) * 10000, 0));
    const auto bl = testing::Lines(bins.out);
    ASSERT_EQ(bl.size(), 7u) << bins.out;
    const double got = std::stod(bl[b].substr(bl[b].find("\"sum\":") + 6));
    EXPECT_NEAR(got, exact, 1e-9 * 3e4) << bl[b];
  }
}

TEST_F(OlaCommandsTest, InfoAndVerifyShowIt) {
  auto info = RunCli({"info", a_});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("kind:      ola"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("index orders 0..3 from 4-node stencils, bin 64"), std::string::npos) << info.out;
  auto json = RunCli({"info", a_, "--json"});
  EXPECT_NE(json.out.find("\"kind\":\"ola\""), std::string::npos) << json.out;
  auto verify = RunCli({"verify", a_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  // Back to the default buffer: the Ola file goes.
  auto hbb = RunCli({"build", a_});
  ASSERT_EQ(hbb.exit_code, 0) << hbb.err;
  EXPECT_NE(RunCli({"info", a_}).out.find("kind:      hbb"), std::string::npos);
}

TEST_F(OlaCommandsTest, WhatItCannotDoIsRefused) {
  auto order = RunCli({"build", a_, "--buffer", "ola", "--order", "8"});
  EXPECT_EQ(order.exit_code, 2);
  EXPECT_NE(order.err.find("up to order 7"), std::string::npos) << order.err;
  auto bin = RunCli({"build", a_, "--bin", "16"});
  EXPECT_EQ(bin.exit_code, 2);
  EXPECT_NE(bin.err.find("--buffer ola"), std::string::npos) << bin.err;
  auto nan = RunCli({"update", a_}, "5 1\n6 nan\n");
  EXPECT_NE(nan.exit_code, 0);
  EXPECT_NE(nan.err.find("not finite"), std::string::npos) << nan.err;
  auto after = RunCli({"query", a_, "--range", "5:6", "--stat", "sum"});
  EXPECT_EQ(Field(after.out, "sum"), 0);  // nothing of the refused input applied
  // An array holding a NaN cannot have an Ola buffer: build says so.
  const std::string b = dir_.File("b.npy");
  ASSERT_EQ(RunCli({"create", b, "--length", "100"}).exit_code, 0);
  ASSERT_EQ(RunCli({"update", b}, "3 nan\n").exit_code, 0);
  auto build = RunCli({"build", b, "--buffer", "ola"});
  EXPECT_NE(build.exit_code, 0);
  EXPECT_NE(build.err.find("--buffer hbb"), std::string::npos) << build.err;
}

}  // namespace
}  // namespace momenta
