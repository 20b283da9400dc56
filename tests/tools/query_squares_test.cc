// sumsq and rms through `momenta query` as an audio user runs it: one range,
// --json, --ranges lines, --bins and frames of a fixed length (--bin-size,
// the last one shorter), on an i2 recording and on an f8 array holding NaN
// and infinities, both buffer kinds, against long-double scans (the seed is
// printed); --progressive bounds that hold the exact answer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;

using ld = long double;

// The value after "NAME " in a line of "NAME V NAME V ...".
double Field(const std::string& line, const std::string& name) {
  const size_t at = line.find(name + " ");
  EXPECT_NE(at, std::string::npos) << line;
  if (at == std::string::npos) return NAN;
  return std::stod(line.substr(at + name.size() + 1));
}

ld SumSq(const std::vector<ld>& a, uint64_t p, uint64_t q) {
  ld s = 0;
  for (uint64_t i = p; i < q; ++i) s += a[i] * a[i];
  return s;
}

void ExpectClose(double got, ld want, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, static_cast<double>(want)) << what;
  } else {
    EXPECT_LE(std::fabs(got - want), 1e-9L * std::fabs(want) + 1e-300L)
        << what << ": got " << got << " want " << static_cast<double>(want);
  }
}

class QuerySquaresTest : public ::testing::TestWithParam<const char*> {
 protected:
  // An i2 "recording" of kLength random samples (loud and quiet stretches).
  void SetUp() override {
    seed_ = testing::TestSeed();
    std::mt19937_64 rng(seed_);
    a_ = dir_.File("rec.npy");
    std::vector<std::string> create = {"create",   a_,   "--length", std::to_string(kLength),
                                       "--dtype",  "i2", "--leaf",   "64",
                                       "--fanout", "4",  "--order",  "2"};
    if (std::string(GetParam()) == "ola")
      create = {"create",   a_,   "--length", std::to_string(kLength),
                "--dtype",  "i2", "--leaf",   "64",
                "--fanout", "4",  "--buffer", "ola",
                "--order",  "2",  "--bin",    "16"};
    auto c = RunCli(create);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    a_values_.assign(kLength, 0);
    std::string lines;
    for (uint64_t i = 0; i < kLength; ++i) {
      const int loud = (i / 700) % 2 ? 32767 : 300;
      const long v = static_cast<long>(rng() % (2 * loud + 1)) - loud;
      a_values_[i] = v;
      lines += std::to_string(i) + " " + std::to_string(v) + "\n";
    }
    auto u = RunCli({"update", a_}, lines);
    ASSERT_EQ(u.exit_code, 0) << u.err;
  }
  static constexpr uint64_t kLength = 5000;
  uint64_t seed_ = 0;
  ScratchDir dir_;
  std::string a_;
  std::vector<ld> a_values_;
};

TEST_P(QuerySquaresTest, OneRangeAndJson) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (MOMENTA_SEED reproduces)");
  std::mt19937_64 rng(seed_ + 1);
  for (int k = 0; k < 20; ++k) {
    uint64_t p = rng() % kLength, q = rng() % (kLength + 1);
    if (p > q) std::swap(p, q);
    if (p == q) ++q;
    const std::string range = std::to_string(p) + ":" + std::to_string(q);
    auto r = RunCli({"query", a_, "--range", range, "--stat", "sumsq", "--stat", "rms"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ld ss = SumSq(a_values_, p, q);
    ExpectClose(Field(r.out, "sumsq"), ss, "sumsq " + range);
    ExpectClose(Field(r.out, "rms"), std::sqrt(ss / (q - p)), "rms " + range);
  }
  auto j = RunCli({"query", a_, "--range", "0:3", "--stat", "sumsq", "--stat", "rms", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"stats\":{\"sumsq\":"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find(",\"rms\":"), std::string::npos) << j.out;
  auto empty = RunCli({"query", a_, "--range", "7:7", "--stat", "sumsq"});
  EXPECT_EQ(empty.out, "sumsq 0\n");
  auto rms_empty = RunCli({"query", a_, "--range", "7:7", "--stat", "rms"});
  EXPECT_EQ(rms_empty.exit_code, 1);
  EXPECT_NE(rms_empty.err.find("rms: the range is empty"), std::string::npos) << rms_empty.err;
}

TEST_P(QuerySquaresTest, RangeLinesAskForThem) {
  auto r = RunCli({"query", a_, "--ranges", "-", "--stat", "sum"},
                  "10:900\n{\"range\":[100,4000],\"stat\":[\"rms\",\"sumsq\"]}\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind("10:900 sum ", 0), 0u) << lines[0];
  const ld ss = SumSq(a_values_, 100, 4000);
  ExpectClose(Field(lines[1], "rms"), std::sqrt(ss / 3900), "rms line 2");
  ExpectClose(Field(lines[1], "sumsq"), ss, "sumsq line 2");
}

TEST_P(QuerySquaresTest, FramesOfAFixedLengthTheLastShorter) {
  // 1000:4500 in frames of 1024: three whole frames and one of 428.
  auto r = RunCli({"query", a_, "--range", "1000:4500", "--bin-size", "1024", "--stat", "count", "--stat", "rms"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  for (uint64_t k = 0; k < 4; ++k) {
    const uint64_t lo = 1000 + 1024 * k, hi = std::min<uint64_t>(lo + 1024, 4500);
    EXPECT_EQ(lines[k].rfind(
                  std::to_string(lo) + ":" + std::to_string(hi) + " count " + std::to_string(hi - lo) + " rms ", 0),
              0u)
        << lines[k];
    ExpectClose(Field(lines[k], "rms"), std::sqrt(SumSq(a_values_, lo, hi) / (hi - lo)), "frame " + lines[k]);
  }
  EXPECT_NE(r.err.find("4 bins"), std::string::npos) << r.err;
  // --bins K answers the same statistics over equal bins.
  auto bins = RunCli({"query", a_, "--range", "0:5000", "--bins", "5", "--stat", "sumsq", "--json"});
  ASSERT_EQ(bins.exit_code, 0) << bins.err;
  const auto json = Lines(bins.out);
  ASSERT_EQ(json.size(), 5u);
  for (uint64_t k = 0; k < 5; ++k) {
    const std::string head =
        "{\"range\":[" + std::to_string(1000 * k) + "," + std::to_string(1000 * k + 1000) + "],\"stats\":{\"sumsq\":";
    ASSERT_EQ(json[k].rfind(head, 0), 0u) << json[k];
    ExpectClose(std::stod(json[k].substr(head.size())), SumSq(a_values_, 1000 * k, 1000 * k + 1000), json[k]);
  }
  // A frame longer than the range is the range; a frame of one is each element.
  EXPECT_EQ(Lines(RunCli({"query", a_, "--range", "10:13", "--bin-size", "9", "--stat", "count"}).out),
            std::vector<std::string>{"10:13 count 3"});
  EXPECT_EQ(Lines(RunCli({"query", a_, "--range", "10:13", "--bin-size", "1", "--stat", "count"}).out).size(), 3u);
  // --snap moves the frames' edges too.
  auto snapped = RunCli({"query", a_, "--range", "0:300", "--bin-size", "100", "--snap", "--stat", "count"});
  EXPECT_EQ(Lines(snapped.out), (std::vector<std::string>{"0:128 count 128", "128:192 count 64", "192:320 count 128"}))
      << snapped.err;
}

TEST_P(QuerySquaresTest, BinSizeRefusals) {
  auto zero = RunCli({"query", a_, "--range", "0:10", "--bin-size", "0", "--stat", "rms"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--bin-size 0"), std::string::npos) << zero.err;
  auto both = RunCli({"query", a_, "--range", "0:10", "--bins", "2", "--bin-size", "5", "--stat", "rms"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  auto empty = RunCli({"query", a_, "--range", "5:5", "--bin-size", "5", "--stat", "rms"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("is empty"), std::string::npos) << empty.err;
  auto ranges = RunCli({"query", a_, "--ranges", "-", "--bin-size", "5", "--stat", "rms"}, "0:10\n");
  EXPECT_EQ(ranges.exit_code, 2);
  EXPECT_NE(ranges.err.find("--bin-size splits one --range"), std::string::npos) << ranges.err;
}

// The text of field `key` in a flat JSON object line ("" when absent).
std::string Raw(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const size_t at = line.find(k);
  if (at == std::string::npos) return "";
  size_t to = at + k.size();
  while (to < line.size() && line[to] != ',' && line[to] != '}') ++to;
  return line.substr(at + k.size(), to - at - k.size());
}

TEST_P(QuerySquaresTest, ProgressiveBoundsHoldTheExactAnswer) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (MOMENTA_SEED reproduces)");
  std::mt19937_64 rng(seed_ + 2);
  for (int k = 0; k < 6; ++k) {
    uint64_t p = rng() % kLength, q = rng() % kLength;
    if (p > q) std::swap(p, q);
    ++q;
    for (const char* stat : {"sumsq", "rms"}) {
      const std::string range = std::to_string(p) + ":" + std::to_string(q);
      auto r = RunCli({"query", a_, "--range", range, "--stat", stat, "--progressive", "--json"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto lines = Lines(r.out);
      ASSERT_GE(lines.size(), 1u);
      const ld ss = SumSq(a_values_, p, q);
      const ld exact = std::string(stat) == "rms" ? std::sqrt(ss / (q - p)) : ss;
      for (size_t j = 0; j < lines.size(); ++j) {
        SCOPED_TRACE(range + " " + lines[j]);
        EXPECT_LE(std::strtold(Raw(lines[j], "lower").c_str(), nullptr), exact);
        EXPECT_GE(std::strtold(Raw(lines[j], "upper").c_str(), nullptr), exact);
        EXPECT_EQ(Raw(lines[j], "exact"), j + 1 == lines.size() ? "true" : "false");
      }
      EXPECT_EQ(Raw(lines[0], "array_bytes_read"), "0");
      ExpectClose(std::stod(Raw(lines.back(), "estimate")), exact, "last line " + range);
    }
  }
  auto approx = RunCli({"query", a_, "--range", "100:4000", "--stat", "rms", "--approx"});
  ASSERT_EQ(approx.exit_code, 0) << approx.err;
  EXPECT_EQ(Lines(approx.out).size(), 1u);
  EXPECT_EQ(approx.out.rfind("rms ", 0), 0u) << approx.out;
  EXPECT_EQ(RunCli({"query", a_, "--range", "5:5", "--stat", "rms", "--progressive"}).exit_code, 1);
}

INSTANTIATE_TEST_SUITE_P(Kinds, QuerySquaresTest, ::testing::Values("hbb", "ola"));

// An f8 array with NaN and infinities: NumPy's answers, skipna too.
TEST(QuerySquaresNonFiniteTest, NanAndInfinityAsNumPy) {
  ScratchDir dir;
  const std::string a = dir.File("f.npy");
  ASSERT_EQ(RunCli({"create", a, "--length", "400", "--leaf", "64", "--fanout", "4"}).exit_code, 0);
  std::string lines;
  for (int i = 0; i < 400; ++i) lines += std::to_string(i) + " " + std::to_string(0.5 * i - 50) + "\n";
  lines += "10 nan\n300 -inf\n";
  ASSERT_EQ(RunCli({"update", a}, lines).exit_code, 0);
  auto stat = [&](const std::string& range, const std::string& name, bool skipna) {
    std::vector<std::string> argv = {"query", a, "--range", range, "--stat", name};
    if (skipna) argv.push_back("--skipna");
    auto r = RunCli(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(stat("0:100", "sumsq", false), "sumsq nan\n");
  EXPECT_EQ(stat("0:100", "rms", false), "rms nan\n");
  EXPECT_EQ(stat("200:400", "sumsq", false), "sumsq inf\n");
  EXPECT_EQ(stat("200:400", "rms", true), "rms inf\n");
  EXPECT_EQ(stat("10:11", "sumsq", true), "sumsq 0\n");
  EXPECT_EQ(stat("10:11", "rms", true), "rms nan\n");
  ld ss = 0;
  for (int i = 0; i < 100; ++i)
    if (i != 10) ss += (0.5L * i - 50) * (0.5L * i - 50);
  ExpectClose(Field(stat("0:100", "sumsq", true), "sumsq"), ss, "nansum");
  ExpectClose(Field(stat("0:100", "rms", true), "rms"), std::sqrt(ss / 99), "nanmean");
  auto j = RunCli({"query", a, "--range", "0:100", "--stat", "rms", "--json"});
  EXPECT_NE(j.out.find("\"rms\":\"NaN\""), std::string::npos) << j.out;
}

}  // namespace
}  // namespace momenta
