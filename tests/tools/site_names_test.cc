// Named items through the processes: two `momenta site --item name --once`
// reading dpkg.log-like "TIMESTAMP PACKAGE" lines (generated, seeded), a
// `momenta root`, and `momenta ask` answering `frequent`, `items` and `item
// NAME` in package names, within the bounds of the exact window over both
// inputs at the answer's as_of. Without --item name, a word where an integer
// belongs is refused with one line saying to pass it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "tests/cli_background.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::Background;
using testing::RunCli;
using testing::ScratchDir;
using testing::WaitPortFile;
using testing::WriteFileBytes;

constexpr int64_t kWindow = 60000;  // 1 min, in ms
constexpr double kEps = 0.05;

// Lines "TIMESTAMP PACKAGE" of one site, 1..`end` s in ms, a few packages a
// second with a skewed popularity; each counted into *exact by time.
std::string Generate(uint64_t seed, int site, int64_t end, std::multimap<int64_t, std::string>* exact) {
  std::mt19937_64 rng(seed * 7 + site);
  std::string text = "# generated from dpkg.log's package names\n";
  for (int64_t s = 1; s <= end; ++s) {
    for (int j = 0; j < 3; ++j) {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      const int rank = static_cast<int>(std::pow(120.0, u * u)) - 1;
      const std::string name = "lib" + std::to_string((rank + 11 * site) * 7919 % 1000) + "-pkg:amd64";
      text += std::to_string(s * 1000) + " " + name + "\n";
      exact->emplace(s * 1000, name);
    }
  }
  return text;
}

TEST(SiteNamesCliTest, RootAnswersInNamesOfTwoSites) {
  const uint64_t seed = 4242;
  SCOPED_TRACE("seed " + std::to_string(seed));
  ScratchDir dir;
  std::multimap<int64_t, std::string> exact;
  const int64_t end = 150;
  WriteFileBytes(dir.File("a.txt"), Generate(seed, 0, end, &exact));
  WriteFileBytes(dir.File("b.txt"), Generate(seed, 1, end, &exact));
  Background root(
      {"root", "--listen", "127.0.0.1:0", "--port-file", dir.File("port"), "--eps", "0.05", "--window", "1m"},
      dir.path(), "root");
  const uint16_t port = WaitPortFile(dir.File("port"), 5000);
  ASSERT_NE(port, 0) << root.Err();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  for (const char* id : {"a", "b"}) {
    auto r = RunCli({"site", "--root", addr, "--id", id, "--input", dir.File(std::string(id) + ".txt"), "--item",
                     "name", "--once"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const int64_t t = end * 1000;
  auto freq = RunCli({"ask", addr, "frequent", "0.1", "--at", std::to_string(t)});
  ASSERT_EQ(freq.exit_code, 0) << freq.err;
  std::map<std::string, double> want;
  double n = 0;
  for (auto it = exact.upper_bound(t - kWindow); it != exact.end() && it->first <= t; ++it) {
    want[it->second] += 1;
    n += 1;
  }
  std::istringstream lines(freq.out);
  std::string head;
  std::getline(lines, head);
  EXPECT_EQ(head.rfind("as_of=" + std::to_string(t) + " sites=2/2 ", 0), 0u) << freq.out;
  std::map<std::string, double> got;
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    std::istringstream w(line);
    std::string name;
    double c = 0;
    ASSERT_TRUE(w >> name >> c) << line;
    ASSERT_TRUE(want.count(name)) << name << " is not a package of the inputs\n" << freq.out;
    EXPECT_LE(std::abs(c - want[name]), kEps * n) << name;
    got[name] = c;
  }
  int frequent = 0;
  for (const auto& [name, c] : want) {
    if (c < 0.1 * n) continue;
    ++frequent;
    EXPECT_TRUE(got.count(name)) << name << " missing\n" << freq.out;
    auto item = RunCli({"ask", addr, "item", name, "--at", std::to_string(t)});
    ASSERT_EQ(item.exit_code, 0) << item.err;
    const size_t at = item.out.find("item=" + name + " count=");
    ASSERT_NE(at, std::string::npos) << item.out;
    EXPECT_LE(std::abs(std::stod(item.out.substr(at + name.size() + 12)) - c), kEps * n) << item.out;
  }
  EXPECT_GE(frequent, 1);
  auto json = RunCli({"ask", addr, "items", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"item\":\"lib"), std::string::npos) << json.out;
}

TEST(SiteNamesCliTest, WordsWithoutItemNameAreRefusedWithTheFlagToPass) {
  ScratchDir dir;
  WriteFileBytes(dir.File("in.txt"), "1000 libc6:amd64\n");
  auto w = RunCli({"window", "--input", dir.File("in.txt"), "--window", "1m", "--eps", "0.1"});
  EXPECT_NE(w.exit_code, 0);
  EXPECT_NE(w.err.find("'libc6:amd64' is not an integer (to count words as items: --item name)"), std::string::npos)
      << w.err;
  auto s = RunCli({"site", "--root", "127.0.0.1:1", "--id", "a", "--log", dir.File("x.npy"), "--item", "name"});
  EXPECT_EQ(s.exit_code, 2) << s.err;
  EXPECT_NE(s.err.find("names come from --input"), std::string::npos) << s.err;
}

}  // namespace
}  // namespace momenta
