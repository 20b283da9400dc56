// Named items through `momenta window --input FILE --item name`: a log whose
// items are package names (dpkg's format: "DATE TIME ACTION PACKAGE ..."),
// turned into "TIMESTAMP ITEM" lines (ms, with a '#' comment line on top),
// and every report checked against the exact window of those lines: the
// count within eps c, each top item's count, by name, within (eps/3) c.
// One log is generated in dpkg's format (seeded); the machine's own
// /var/log/dpkg.log is read too when there is one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "stream/window/item_mapping.h"
#include "stream/window/name_table.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

constexpr double kEps = 0.05;
constexpr int64_t kWindowMs = 10 * 60 * 1000;

struct Named {
  int64_t ts;
  std::string name;
};

// The package a dpkg.log line is about, and its time in ms; false for lines
// about no package (startup, conffile).
bool ParseDpkgLine(const std::string& line, Named* out) {
  std::istringstream in(line);
  std::string date, time, action, a, b;
  if (!(in >> date >> time >> action >> a)) return false;
  std::string package = a;
  if (action == "status") {
    if (!(in >> b)) return false;
    package = b;
  } else if (action != "install" && action != "upgrade" && action != "configure" && action != "remove" &&
             action != "purge" && action != "trigproc") {
    return false;
  }
  std::tm tm{};
  if (std::sscanf((date + " " + time).c_str(), "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return false;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  out->ts = static_cast<int64_t>(timegm(&tm)) * 1000;
  out->name = package;
  return true;
}

// A dpkg.log of `runs` apt runs a few hours apart, each configuring packages
// drawn with a skewed popularity (a few are in almost every run).
std::string GenerateDpkgLog(uint64_t seed, int runs) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> packages;
  for (int i = 0; i < 300; ++i) packages.push_back("lib" + std::to_string(i * 7919 % 1000) + "-pkg:amd64");
  std::string text;
  int64_t t = 1719232585;  // 2024-06-24 12:36:25 UTC
  for (int r = 0; r < runs; ++r) {
    t += 3600 + static_cast<int64_t>(rng() % 7200);
    char stamp[32];
    auto line = [&](const std::string& rest) {
      const std::time_t tt = t;
      std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::gmtime(&tt));
      text += std::string(stamp) + " " + rest + "\n";
    };
    line("startup archives unpack");
    const int n = 5 + static_cast<int>(rng() % 60);
    for (int k = 0; k < n; ++k) {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      const std::string& p = packages[static_cast<size_t>(std::pow(u, 3) * packages.size())];
      line("upgrade " + p + " 1.0-1 1.0-2");
      line("status half-installed " + p + " 1.0-2");
      if (rng() % 3 == 0) t += 1;
      line("configure " + p + " 1.0-2 <none>");
      line("status installed " + p + " 1.0-2");
    }
    line("trigproc man-db:amd64 2.11.2-2 <none>");
    line("status installed man-db:amd64 2.11.2-2");
  }
  return text;
}

// A number after "key": in a JSON object.
double NumberAfter(const std::string& line, const std::string& key, size_t from = 0) {
  const size_t at = line.find("\"" + key + "\":", from);
  return at == std::string::npos ? NAN : std::strtod(line.c_str() + at + key.size() + 3, nullptr);
}

// Runs the window over the dpkg log `text` and checks every report.
void CheckWindowOverDpkgLog(const std::string& text) {
  std::vector<Named> items;
  for (const std::string& line : Lines(text)) {
    Named x;
    if (ParseDpkgLine(line, &x)) items.push_back(x);
  }
  ASSERT_GT(items.size(), 100u);
  std::string input = "# TIMESTAMP(ms) PACKAGE, from dpkg.log\n";
  for (const Named& x : items) input += std::to_string(x.ts) + " " + x.name + "\n";
  ScratchDir dir;
  WriteFileBytes(dir.File("in.txt"), input);
  auto r = RunCli({"window", "--input", dir.File("in.txt"), "--item", "name", "--window", "10m", "--eps",
                   std::to_string(kEps), "--top", "5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto reports = Lines(r.out);
  ASSERT_FALSE(reports.empty());
  size_t checked = 0;
  for (const std::string& rep : reports) {
    const auto t = static_cast<int64_t>(NumberAfter(rep, "t"));
    std::map<std::string, double> exact;
    double c = 0;
    for (const Named& x : items)
      if (x.ts > t - kWindowMs && x.ts <= t) ++exact[x.name], ++c;
    const double count = NumberAfter(rep, "count");
    EXPECT_LE(std::abs(count - c), kEps * c) << rep << " exact " << c;
    // Each top item: {"item":"NAME","count":X}.
    for (size_t at = rep.find("{\"item\":\""); at != std::string::npos; at = rep.find("{\"item\":\"", at + 1)) {
      const size_t name_from = at + 9, name_to = rep.find('"', name_from);
      const std::string name = rep.substr(name_from, name_to - name_from);
      ASSERT_TRUE(exact.count(name)) << "t=" << t << ": '" << name << "' is not in the window: " << rep;
      EXPECT_LE(std::abs(NumberAfter(rep, "count", name_to) - exact[name]), kEps / 3 * c + 1e-9)
          << "t=" << t << " " << name << " exact " << exact[name] << " of " << c << ": " << rep;
      ++checked;
    }
  }
  std::printf("%zu reports, %zu top items checked against the exact window\n", reports.size(), checked);
  EXPECT_GT(checked, reports.size());
}

TEST(WindowNamesTest, GeneratedDpkgLogEveryReportWithinItsBounds) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  CheckWindowOverDpkgLog(GenerateDpkgLog(seed, 40));
}

TEST(WindowNamesTest, ThisMachinesDpkgLogEveryReportWithinItsBounds) {
  std::ifstream in("/var/log/dpkg.log");
  if (!in) GTEST_SKIP() << "no readable /var/log/dpkg.log on this machine";
  std::stringstream text;
  text << in.rdbuf();
  CheckWindowOverDpkgLog(text.str());
}

TEST(WindowNamesTest, QuantilesAndLogsAreRefusedOnNames) {
  auto r = RunCli({"window", "--input", "-", "--item", "name", "--window", "5", "--eps", "0.1", "--quantiles", "0.5"},
                  "1 apt\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--quantiles: the items are names"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err).size(), 2u) << r.err;  // the line, and CLI11's "Run with --help"
  r = RunCli({"window", "--input", "-", "--item", "name", "--window", "5", "--eps", "0.1", "--top", "2"},
             "# a comment\n1 apt\n1 apt\n2 libc6\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "t=1 count=2 dropped=0 top=apt:2\nt=2 count=3 dropped=0 top=apt:2,libc6:1\n");
}

TEST(WindowNamesTableTest, HoldsOnlyTheNamesTheSynopsisHolds) {
  auto counts = ItemCounts::Create({/*window=*/100, /*tardiness=*/0}, 0.05);
  ASSERT_TRUE(counts.ok());
  NameTable names;
  // 100,000 distinct names, one each, and one name in every tenth arrival.
  for (int64_t i = 0; i < 100000; ++i) {
    std::string name = "hot";
    if (i % 10 != 0) name = std::to_string(i).append("n");  // (not "n" + ...: GCC 12's -Wrestrict misfires)
    const int64_t item = NameItem(name);
    counts->Update(i / 100, item);
    names.Note(item, name);
    names.Prune(*counts);
  }
  EXPECT_LT(names.size(), 20000u);
  EXPECT_EQ(names.NameOf(NameItem("hot")), "hot");
  EXPECT_EQ(counts->Top(1).at(0).item, NameItem("hot"));
  EXPECT_EQ(names.collisions(), 0u);
  names.Note(NameItem("hot"), "not hot");  // as if another name had the same hash
  EXPECT_EQ(names.collisions(), 1u);
  EXPECT_EQ(names.NameOf(NameItem("hot")), "hot");
  EXPECT_EQ(names.NameOf(12), "#000000000000000c");
}

}  // namespace
}  // namespace momenta
