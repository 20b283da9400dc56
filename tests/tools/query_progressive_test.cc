// `momenta query --progressive` and `--approx`: every NDJSON line holds an
// interval containing the exact answer (a long-double scan), the lines
// narrow, only the last says "exact": true and equals the ordinary query's
// answer; the first line (and --approx's only one) reads no array byte —
// shown by its byte count and by changing the array's cells behind the
// buffer's back (modification time kept): --approx answers exactly as
// before, while the ordinary query sees the change. sumsq and rms (Σa²) the
// same way. Statistics other than sum, count, mean, sumsq and rms, several --stat, --skipna and --ranges are refused
// with one line naming what --progressive serves.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

// The text of field `key` in a flat JSON object line ("" when absent).
std::string Raw(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const size_t at = line.find(k);
  if (at == std::string::npos) return "";
  const size_t from = at + k.size();
  size_t to = from;
  if (line[from] == '"')
    to = line.find('"', from + 1) + 1;
  else
    while (to < line.size() && line[to] != ',' && line[to] != '}') ++to;
  return line.substr(from, to - from);
}

ld Number(const std::string& text) {
  if (text == "\"NaN\"") return std::numeric_limits<ld>::quiet_NaN();
  if (text == "\"Infinity\"") return std::numeric_limits<ld>::infinity();
  if (text == "\"-Infinity\"") return -std::numeric_limits<ld>::infinity();
  return std::strtold(text.c_str(), nullptr);
}

class QueryProgressiveTest : public ::testing::Test {
 protected:
  // n f8 cells: alternating signs around 1e6, one 1e300 spike at 40000 (in
  // the third leaf of 16384 cells), a NaN at 90000.
  void SetUp() override {
    a_ = dir_.File("a.npy");
    cells_.resize(100000);
    for (size_t i = 0; i < cells_.size(); ++i) cells_[i] = (i % 2 ? -1.0 : 1.0) * (1e6 + static_cast<double>(i % 13));
    cells_[40000] = 1e300;
    cells_[90000] = std::nan("");
    Import(cells_);
  }
  void Import(const std::vector<double>& cells) {
    const std::string raw = dir_.File("a.raw");
    WriteFileBytes(raw, std::string(reinterpret_cast<const char*>(cells.data()), cells.size() * sizeof(double)));
    auto r = RunCli({"import", raw, a_, "--dtype", "f8", "--force"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto b = RunCli({"build", a_});
    ASSERT_EQ(b.exit_code, 0) << b.err;
  }
  // np.sum in long double: NaN when a NaN is inside.
  ld Exact(uint64_t p, uint64_t q) const {
    ld s = 0;
    for (uint64_t i = p; i < q; ++i) s += cells_[i];
    return s;
  }
  // Runs --progressive --json for `stat` over p:q and checks every line.
  std::vector<std::string> CheckProgressive(const std::string& stat, uint64_t p, uint64_t q) {
    const std::string range = std::to_string(p) + ":" + std::to_string(q);
    auto r = RunCli({"query", a_, "--range", range, "--stat", stat, "--progressive", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> lines = Lines(r.out);
    EXPECT_GE(lines.size(), 1u);
    ld exact = stat == "mean" ? Exact(p, q) / static_cast<ld>(q - p) : Exact(p, q);
    if (stat == "sumsq" || stat == "rms") {  // as float64: the spike's square (1e600) makes it inf
      ld s = 0;
      for (uint64_t i = p; i < q; ++i) s += static_cast<ld>(cells_[i]) * cells_[i];
      if (s > std::numeric_limits<double>::max()) s = INFINITY;
      exact = stat == "rms" ? std::sqrt(s / static_cast<ld>(q - p)) : s;
    }
    ld last_lower = -INFINITY, last_upper = INFINITY;
    for (size_t k = 0; k < lines.size(); ++k) {
      const std::string& line = lines[k];
      SCOPED_TRACE(range + " line " + std::to_string(k) + ": " + line);
      EXPECT_EQ(Raw(line, "stat"), "\"" + stat + "\"");
      const ld estimate = Number(Raw(line, "estimate")), lower = Number(Raw(line, "lower")),
               upper = Number(Raw(line, "upper"));
      EXPECT_EQ(Raw(line, "exact"), k + 1 == lines.size() ? "true" : "false");
      if (k == 0) {
        EXPECT_EQ(Raw(line, "array_bytes_read"), "0");
      }
      const std::string nan = Raw(line, "nan");
      if (std::isnan(exact)) {
        EXPECT_NE(nan, "\"no\"");
        continue;
      }
      EXPECT_NE(nan, "\"certain\"");
      EXPECT_LE(lower, exact);
      EXPECT_GE(upper, exact);
      EXPECT_LE(lower, estimate);
      EXPECT_LE(estimate, upper);
      if (k + 1 < lines.size()) {  // refinements narrow (the last may widen to hold the query's answer)
        EXPECT_GE(lower, last_lower);
        EXPECT_LE(upper, last_upper);
      }
      last_lower = lower, last_upper = upper;
    }
    return lines;
  }

  ScratchDir dir_;
  std::string a_;
  std::vector<double> cells_;
};

TEST_F(QueryProgressiveTest, EveryLineHoldsTheExactAnswer) {
  for (auto [p, q] : {std::pair<uint64_t, uint64_t>{1000, 99000},
                      {100, 200},
                      {16384, 32768},
                      {0, 100000},
                      {39000, 41000},
                      {40001, 70000},
                      {30000, 40001},
                      {50000, 95000},
                      {89999, 90001}}) {
    for (const char* stat : {"sum", "mean", "sumsq", "rms"}) CheckProgressive(stat, p, q);
    if (HasFailure()) return;
  }
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("MOMENTA_SEED=" + std::to_string(seed) + " reproduces");
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 8 && !HasFailure(); ++k) {
    uint64_t p = rng() % 100000, q = rng() % 100000;
    if (p > q) std::swap(p, q);
    CheckProgressive("sum", p, q + 1);
    CheckProgressive("rms", p, q + 1);
  }
}

TEST_F(QueryProgressiveTest, LastLineIsTheOrdinaryAnswer) {
  const auto lines = CheckProgressive("sum", 1234, 77777);
  ASSERT_FALSE(lines.empty());
  auto plain = RunCli({"query", a_, "--range", "1234:77777", "--stat", "sum", "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(Raw(lines.back(), "estimate"), Raw(plain.out, "sum")) << lines.back() << "\n" << plain.out;
  EXPECT_GT(lines.size(), 2u) << "no refinement between the first line and the answer";
}

TEST_F(QueryProgressiveTest, TextLines) {
  auto r = RunCli({"query", a_, "--range", "1000:99000", "--stat", "sum", "--progressive"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), 2u);
  for (size_t k = 0; k < lines.size(); ++k) {
    EXPECT_EQ(lines[k].rfind("sum ", 0), 0u) << lines[k];
    const std::string tail = k + 1 == lines.size() ? " exact" : " approx";
    EXPECT_EQ(lines[k].substr(lines[k].size() - tail.size()), tail) << lines[k];
  }
}

TEST_F(QueryProgressiveTest, NanDecidesTheAnswer) {
  // The NaN's leaf (5, cells 81920..98303) lies whole inside: certain from the nodes.
  auto r = RunCli({"query", a_, "--range", "100:99000", "--stat", "sum", "--approx", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Raw(r.out, "nan"), "\"certain\"") << r.out;
  EXPECT_EQ(Raw(r.out, "estimate"), "\"NaN\"") << r.out;
  // A range ending beside it, in its leaf: maybe, until the leaf is read.
  const auto lines = CheckProgressive("sum", 100, 89990);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(Raw(lines.front(), "nan"), "\"maybe\"") << lines.front();
  EXPECT_EQ(Raw(lines.back(), "nan"), "\"no\"") << lines.back();
}

TEST_F(QueryProgressiveTest, CountIsExactAtOnce) {
  auto r = RunCli({"query", a_, "--range", "5:70000", "--stat", "count", "--progressive", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 1u) << r.out;
  EXPECT_EQ(Raw(r.out, "estimate"), "69995");
  EXPECT_EQ(Raw(r.out, "lower"), "69995");
  EXPECT_EQ(Raw(r.out, "exact"), "true");
}

// --approx reads no byte of the array: the cells of its end leaves are
// changed behind the buffer's back (modification time put back, so the
// buffer is taken as current): --approx prints the same line as before,
// the ordinary query a different sum.
TEST_F(QueryProgressiveTest, ApproxReadsNoArrayByte) {
  auto before = RunCli({"query", a_, "--range", "41000:80000", "--stat", "sum", "--approx", "--json"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(Lines(before.out).size(), 1u) << before.out;
  EXPECT_EQ(Raw(before.out, "array_bytes_read"), "0");
  EXPECT_EQ(Raw(before.out, "exact"), "false");
  auto plain_before = RunCli({"query", a_, "--range", "41000:80000", "--stat", "sum"});
  struct stat st;
  ASSERT_EQ(::stat(a_.c_str(), &st), 0);
  {
    FILE* f = std::fopen(a_.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const double changed[8] = {7, 7, 7, 7, 7, 7, 7, 7};  // cells 41000..41007: in the partial leaf 2
    ASSERT_EQ(std::fseek(f, 4096 + 41000 * 8, SEEK_SET), 0);
    ASSERT_EQ(std::fwrite(changed, sizeof changed, 1, f), 1u);
    ASSERT_EQ(std::fclose(f), 0);
  }
  const timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, a_.c_str(), times, 0), 0);
  auto after = RunCli({"query", a_, "--range", "41000:80000", "--stat", "sum", "--approx", "--json"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(Raw(after.out, "estimate"), Raw(before.out, "estimate"));
  EXPECT_EQ(Raw(after.out, "lower"), Raw(before.out, "lower"));
  EXPECT_EQ(Raw(after.out, "upper"), Raw(before.out, "upper"));
  auto plain_after = RunCli({"query", a_, "--range", "41000:80000", "--stat", "sum"});
  EXPECT_NE(plain_after.out, plain_before.out) << "the ordinary query did not see the change: the proof proves nothing";
}

// A damaged node (leaf 3, whole inside the range): the buffer is rebuilt with
// a notice and the bounds start over; every line still holds the answer.
TEST_F(QueryProgressiveTest, DamagedNodeIsRebuilt) {
  const std::string tree = a_ + ".momenta/tree";
  {
    FILE* f = std::fopen(tree.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const uint64_t node_bytes = (2 * 2 + 20) * 8;  // order 2
    ASSERT_EQ(std::fseek(f, static_cast<long>(4096 + 3 * node_bytes + 8), SEEK_SET), 0);
    const double junk = 12345.678;
    ASSERT_EQ(std::fwrite(&junk, sizeof junk, 1, f), 1u);
    ASSERT_EQ(std::fclose(f), 0);
  }
  auto r = RunCli({"query", a_, "--range", "41000:80000", "--stat", "sum", "--progressive", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("rebuil"), std::string::npos) << r.err;
  CheckProgressive("sum", 41000, 80000);
}

TEST_F(QueryProgressiveTest, IntegerSumsAreExactIntegers) {
  const std::string raw = dir_.File("i.raw"), b = dir_.File("i.npy");
  std::vector<int64_t> v(50000);
  __extension__ typedef __int128 Int128;
  Int128 sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = (i % 3 == 0 ? std::numeric_limits<int64_t>::max() : -static_cast<int64_t>(i * 7919));
    if (i >= 777 && i < 44444) sum += v[i];
  }
  WriteFileBytes(raw, std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t)));
  ASSERT_EQ(RunCli({"import", raw, b, "--dtype", "i8"}).exit_code, 0);
  auto r = RunCli({"query", b, "--range", "777:44444", "--stat", "sum", "--progressive", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), 2u);
  std::string expected;
  for (Int128 m = sum; m != 0; m /= 10) expected.insert(expected.begin(), static_cast<char>('0' + m % 10));
  EXPECT_EQ(Raw(lines.back(), "estimate"), expected);
  EXPECT_EQ(Raw(lines.back(), "lower"), expected);
  for (const std::string& line : lines) {
    const std::string lo = Raw(line, "lower"), hi = Raw(line, "upper");
    // Integers print exactly: compare as (length, text) for these positive sums.
    EXPECT_TRUE(lo.size() < expected.size() || (lo.size() == expected.size() && lo <= expected) || lo[0] == '-')
        << line;
    EXPECT_TRUE(hi.size() > expected.size() || (hi.size() == expected.size() && hi >= expected)) << line;
  }
}

TEST_F(QueryProgressiveTest, RefusalsNameWhatItServes) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--stat", "var", "--progressive"},
                                                                {"--stat", "max", "--approx"},
                                                                {"--stat", "sum", "--stat", "mean", "--progressive"},
                                                                {"--stat", "sum", "--progressive", "--skipna"},
                                                                {"--stat", "sum", "--progressive", "--bins", "4"}}) {
    std::vector<std::string> argv = {"query", a_, "--range", "0:100"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCli(argv);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const bool names_flag =
        r.err.find("--progressive") != std::string::npos || r.err.find("--approx") != std::string::npos;
    EXPECT_TRUE(names_flag) << r.err;
  }
  auto r = RunCli({"query", a_, "--range", "0:100", "--stat", "var", "--progressive"});
  EXPECT_NE(r.err.find("sum, count, mean, sumsq and rms"), std::string::npos) << r.err;
  auto empty = RunCli({"query", a_, "--range", "5:5", "--stat", "mean", "--progressive"});
  EXPECT_EQ(empty.exit_code, 1) << empty.err;
  EXPECT_NE(empty.err.find("empty"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace momenta
