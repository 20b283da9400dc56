// The buffer commands of the CLI: query (every stat, --json, errors), build,
// verify, update, and info's view of the tiers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

double Field(const std::string& out, const std::string& stat) {
  // "stat v1 v2 ..." lines
  size_t at = out.find(stat + " ");
  EXPECT_NE(at, std::string::npos) << out;
  if (at == std::string::npos) return NAN;
  return std::stod(out.substr(at + stat.size() + 1));
}

class QueryCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = dir_.File("a.npy");
    ASSERT_EQ(RunCli({"create", a_, "--length", "1000", "--order", "3"}).exit_code, 0);
    // a_i = i for i in [100, 200), else 0
    std::string lines;
    for (int i = 100; i < 200; ++i) lines += std::to_string(i) + " " + std::to_string(i) + "\n";
    auto u = RunCli({"update", a_}, lines);
    ASSERT_EQ(u.exit_code, 0) << u.err;
  }
  ScratchDir dir_;
  std::string a_;
};

TEST_F(QueryCommandsTest, EveryStatistic) {
  auto r = RunCli({"query",  a_,    "--range", "150:250", "--stat", "sum", "--stat", "count", "--stat", "mean",
                   "--stat", "var", "--stat",  "std",     "--stat", "min", "--stat", "max",   "--stat", "com"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // i = 150..199 contribute: sum = 8725
  EXPECT_EQ(Field(r.out, "sum"), 8725);
  EXPECT_EQ(Field(r.out, "count"), 100);
  EXPECT_DOUBLE_EQ(Field(r.out, "mean"), 87.25);
  EXPECT_EQ(Field(r.out, "min"), 0);
  EXPECT_EQ(Field(r.out, "max"), 199);
  double ss = 0;
  for (int i = 150; i < 250; ++i) {
    const double v = i < 200 ? i : 0;
    ss += (v - 87.25) * (v - 87.25);
  }
  EXPECT_NEAR(Field(r.out, "var"), ss / 100, 1e-9 * ss);
  EXPECT_NEAR(Field(r.out, "std"), std::sqrt(ss / 100), 1e-9);
  double m2 = 0;
  for (int i = 150; i < 200; ++i) m2 += 1.0 * i * i;
  EXPECT_NEAR(Field(r.out, "com"), m2 / 8725, 1e-9);

  auto sample = RunCli({"query", a_, "--range", "150:250", "--stat", "var", "--ddof", "1"});
  EXPECT_NEAR(Field(sample.out, "var"), ss / 99, 1e-9 * ss);

  // moment of order 2 about 160: Σ (i-160)^2 i
  double m = 0;
  for (int i = 150; i < 200; ++i) m += (i - 160.0) * (i - 160.0) * i;
  auto mom = RunCli({"query", a_, "--range", "150:250", "--stat", "moment", "--order", "2", "--about", "160"});
  EXPECT_NEAR(Field(mom.out, "moment"), m, 1e-9 * m);
  auto moms = RunCli({"query", a_, "--range", "150:250", "--stat", "moments", "--json"});
  ASSERT_EQ(moms.exit_code, 0) << moms.err;
  EXPECT_NE(moms.out.find("\"moments\":[8725,"), std::string::npos) << moms.out;
  EXPECT_NE(moms.out.find("\"elapsed_us\":"), std::string::npos);
  EXPECT_NE(moms.out.find("\"array_bytes_read\":"), std::string::npos);
  EXPECT_NE(moms.out.find("\"tier_bytes_read\":"), std::string::npos);

  // polyfit of a line: a_i = i over [100, 200) in x = i - 100: 100 + 1 x
  auto fit = RunCli({"query", a_, "--range", "100:200", "--stat", "polyfit", "--degree", "1"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  const std::string coeffs = fit.out.substr(fit.out.find("polyfit ") + 8);
  EXPECT_NEAR(std::stod(coeffs), 100, 1e-6);
  EXPECT_NEAR(std::stod(coeffs.substr(coeffs.find(' '))), 1, 1e-9);
}

TEST_F(QueryCommandsTest, EmptyRangeAndBadInput) {
  auto empty = RunCli({"query", a_, "--range", "5:5", "--stat", "sum", "--stat", "count"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "sum 0\ncount 0\n");
  auto mean = RunCli({"query", a_, "--range", "5:5", "--stat", "mean"});
  EXPECT_EQ(mean.exit_code, 1);
  EXPECT_NE(mean.err.find("empty"), std::string::npos) << mean.err;
  EXPECT_EQ(RunCli({"query", a_, "--range", "0:1001", "--stat", "sum"}).exit_code, 1);
  EXPECT_EQ(RunCli({"query", a_, "--range", "9:3", "--stat", "sum"}).exit_code, 1);
  EXPECT_EQ(RunCli({"query", a_, "--range", "x:3", "--stat", "sum"}).exit_code, 2);
  EXPECT_EQ(RunCli({"query", a_, "--range", "0:10", "--stat", "median"}).exit_code, 2);
  EXPECT_EQ(RunCli({"query", a_, "--range", "0:10"}).exit_code, 2);
  auto deg = RunCli({"query", a_, "--range", "0:100", "--stat", "polyfit", "--degree", "4"});
  EXPECT_EQ(deg.exit_code, 1);
  EXPECT_NE(deg.err.find("degree"), std::string::npos) << deg.err;

  // a bad update line changes nothing
  auto bad = RunCli({"update", a_}, "1 5\n2 x\n");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("line 2"), std::string::npos) << bad.err;
  auto out = RunCli({"update", a_}, "1 5\n1000 1\n");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.err.find("outside"), std::string::npos) << out.err;
  EXPECT_EQ(RunCli({"get", a_, "1"}).out, "0\n");
}

TEST_F(QueryCommandsTest, BuildVerifyInfoAndStaleness) {
  auto info = RunCli({"info", a_});
  ASSERT_EQ(info.exit_code, 0);
  EXPECT_NE(info.out.find("buffer:      current"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("RAM tier"), std::string::npos) << info.out;
  EXPECT_EQ(RunCli({"verify", a_}).exit_code, 0);
  auto b = RunCli({"build", a_, "--order", "5", "--disk-tier", "off", "--json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto m5 = RunCli({"query", a_, "--range", "100:200", "--stat", "moment", "--order", "5"});
  EXPECT_EQ(m5.exit_code, 0) << m5.err;
  // Change the array behind momenta's back: the next query rebuilds, with a notice.
  {
    std::string bytes = testing::ReadFileBytes(a_);
    const double v = 1000;
    std::memcpy(&bytes[4096 + 8 * 500], &v, 8);
    WriteFileBytes(a_, bytes);
  }
  auto stale = RunCli({"info", a_});
  EXPECT_NE(stale.out.find("stale"), std::string::npos) << stale.out;
  // (the whole array: the answer must come from the rebuilt buffer, not raw reads)
  auto q = RunCli({"query", a_, "--range", ":", "--stat", "sum"});
  ASSERT_EQ(q.exit_code, 0);
  EXPECT_NE(q.err.find("rebuilding"), std::string::npos) << q.err;
  EXPECT_EQ(q.out, "sum 15950\n");
  auto bad = RunCli({"build", a_, "--ram-budget", "lots"});
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace momenta
