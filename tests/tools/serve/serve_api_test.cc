// The routes of `momenta serve` called in-process (tools/serve/api.h): each
// answer is the CLI's --json answer bit for bit (timings aside), errors are
// {"error":...} with the right status, only served arrays are reachable, and
// a served file removed or replaced is reported or reopened.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/io/io_backend.h"
#include "tests/test_util.h"
#include "tools/serve/api.h"
#include "tools/serve/served_arrays.h"

namespace momenta::serve {
namespace {

using testing::Lines;
using testing::RunCli;
using testing::ScratchDir;

// Drops "elapsed_us":..., from a JSON line (the only field a second run changes).
std::string WithoutTimes(std::string line) {
  for (size_t at; (at = line.find("\"elapsed_us\":")) != std::string::npos;) {
    size_t end = line.find_first_of(",}", at);
    if (line[end] == ',') ++end;
    line.erase(at, end - at);
  }
  return line;
}

class ServeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t seed = testing::TestSeed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    path_ = dir_.File("a.npy");
    ASSERT_EQ(RunCli({"create", path_, "--length", "5000", "--dtype", "f8", "--leaf", "64"}).exit_code, 0);
    std::string lines;
    uint64_t x = seed | 1;
    for (int i = 0; i < 5000; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      lines += std::to_string(i) + " " + std::to_string(static_cast<double>(x % 2001) / 10.0 - 100) + "\n";
    }
    auto u = RunCli({"update", path_}, lines);
    ASSERT_EQ(u.exit_code, 0) << u.err;
    auto arrays = ServedArrays::Open({path_}, "", IoKind::kPread);
    ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
    arrays_ = std::move(arrays).value();
    api_ = std::make_unique<Api>(*arrays_, ApiOptions{});
  }
  ApiResponse Get(const std::string& target) { return api_->Handle({"GET", target, ""}); }

  ScratchDir dir_;
  std::string path_;
  std::unique_ptr<ServedArrays> arrays_;
  std::unique_ptr<Api> api_;
};

TEST_F(ServeApiTest, ListsTheServedArrays) {
  auto r = Get("/api/arrays");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("{\"name\":\"a\",\"dtype\":\"f8\",\"shape\":[5000],\"length\":5000"), std::string::npos)
      << r.body;
}

TEST_F(ServeApiTest, StatsAreTheCliAnswer) {
  auto r = Get("/api/arrays/a/stats?range=100:4000&stat=mean&stat=std&stat=min&stat=max&ddof=1&stat=moments&order=2");
  ASSERT_EQ(r.status, 200) << r.body;
  auto cli = RunCli({"query",  path_,     "--range", "100:4000", "--stat", "mean",   "--stat",
                     "std",    "--stat",  "min",     "--stat",   "max",    "--ddof", "1",
                     "--stat", "moments", "--order", "2",        "--json", "--io",   "pread"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string expected = WithoutTimes(Lines(cli.out)[0]);
  const std::string path_json = "\"path\":\"" + path_ + "\"";
  expected.replace(expected.find(path_json), path_json.size(), "\"path\":\"a\"");
  // The cost of the CLI's first query differs from a warm server's: the answers are compared.
  auto stats = [](const std::string& s) {
    return s.substr(s.find("\"stats\":"), s.find(",\"array_bytes") - s.find("\"stats\":"));
  };
  EXPECT_EQ(stats(WithoutTimes(r.body)), stats(expected));
  EXPECT_EQ(r.body.substr(0, 30), expected.substr(0, 30));
}

TEST_F(ServeApiTest, OverviewBinsAreTheCliLines) {
  auto r = Get("/api/arrays/a/overview?range=7:4999&bins=37&stat=mean&stat=min&stat=max&stat=std");
  ASSERT_EQ(r.status, 200) << r.body;
  auto cli = RunCli({"query", path_, "--range", "7:4999", "--bins", "37", "--stat", "mean", "--stat", "min", "--stat",
                     "max", "--stat", "std", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string joined;
  for (const std::string& line : Lines(cli.out)) joined += (joined.empty() ? "" : ",") + line;
  EXPECT_EQ(r.body, "{\"name\":\"a\",\"range\":[7,4999],\"bins\":[" + joined + "]}\n");
  auto snapped = Get("/api/arrays/a/overview?range=7:4999&bins=20&stat=sum&snap=1");
  auto cli_snap = RunCli({"query", path_, "--range", "7:4999", "--bins", "20", "--stat", "sum", "--snap", "--json"});
  joined.clear();
  for (const std::string& line : Lines(cli_snap.out)) joined += (joined.empty() ? "" : ",") + line;
  EXPECT_EQ(snapped.body, "{\"name\":\"a\",\"range\":[7,4999],\"leaf\":64,\"bins\":[" + joined + "]}\n");
}

TEST_F(ServeApiTest, RangesAreTheCliLines) {
  const std::string body = "0:10\n{\"range\":[5,4000],\"stat\":[\"mean\",\"max\"]}\n9000:9001\nnonsense\n-5:\n";
  auto r = api_->Handle({"POST", "/api/arrays/a/ranges?stat=sum", body});
  ASSERT_EQ(r.status, 200) << r.body;
  auto cli = RunCli({"query", path_, "--ranges", "-", "--stat", "sum", "--json", "--on-error", "skip"}, body);
  std::string expected = cli.out;
  // The CLI names its input "stdin", the server "body".
  for (size_t at; (at = expected.find("stdin:")) != std::string::npos;) expected.replace(at, 6, "body:");
  EXPECT_EQ(r.body, expected);
}

TEST_F(ServeApiTest, ProgressiveStreamsTheCliLines) {
  auto r = Get("/api/arrays/a/progressive?range=3:4900&stat=mean");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(r.stream);
  std::vector<std::string> lines;
  r.stream([&](const std::string& line) { lines.push_back(WithoutTimes(line)); });
  auto cli = RunCli({"query", path_, "--range", "3:4900", "--stat", "mean", "--progressive", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::vector<std::string> expected;
  for (const std::string& line : Lines(cli.out)) expected.push_back(WithoutTimes(line) + "\n");
  EXPECT_EQ(lines, expected);
}

TEST_F(ServeApiTest, ValuesAndLog) {
  auto v = Get("/api/arrays/a/values?range=10:13");
  ASSERT_EQ(v.status, 200) << v.body;
  auto cli = RunCli({"get", path_, "10", "--count", "3", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  std::string expected = cli.out;
  expected.replace(expected.find(path_), path_.size(), "a");
  EXPECT_EQ(v.body, expected);
  auto log = Get("/api/arrays/a/log?from=4998");
  auto cli_log = RunCli({"log", path_, "--from", "4998", "--json"});
  EXPECT_EQ(log.body, cli_log.out);
  EXPECT_EQ(Get("/api/arrays/a/values?range=0:5000").status, 200);
  EXPECT_EQ(Get("/api/arrays/a/values?range=0:2^20").status, 400);
}

TEST_F(ServeApiTest, ErrorsHaveTheirStatus) {
  struct Case {
    std::string target;
    int status;
    std::string message;  // a part of the error's text
  };
  const std::vector<Case> cases = {
      {"/api/arrays/..%2F..%2Fetc%2Fpasswd/stats?stat=sum", 404, "no such array"},
      {"/api/arrays/..%2F..%2Fetc%2Fpasswd", 404, "no such route"},
      {"/etc/passwd", 404, "no such route"},
      {"/api/arrays/b/stats?stat=sum", 404, "no such array"},
      {"/api/arrays/a/stats?stat=median", 400, "median"},
      {"/api/arrays/a/stats?stat=sum&range=10:5", 400, "P > Q"},
      {"/api/arrays/a/stats?stat=sum&range=0:6000", 400, "length 5000"},
      {"/api/arrays/a/stats?stat=mean&range=5:5", 400, "the range is empty"},
      {"/api/arrays/a/stats?stat=sum&range=%zz", 400, "hex digits"},
      {"/api/arrays/a/overview?stat=sum&bins=0", 400, "bins"},
      {"/api/arrays/a/overview?stat=sum&bins=5001", 400, "1 <= K <= 5000"},
      {"/api/arrays/a/progressive?stat=max", 400, "one stat"},
      {"/api/arrays/a/nothing", 404, "no such route"},
      {"/api/arrays/a/update", 405, "POST"},
  };
  for (const Case& c : cases) {
    auto r = Get(c.target);
    EXPECT_EQ(r.status, c.status) << c.target << " " << r.body.substr(0, 300);
    EXPECT_EQ(r.body.rfind("{\"error\":\"", 0), 0u) << r.body;
    EXPECT_NE(r.body.find(c.message), std::string::npos) << c.target << " " << r.body.substr(0, 300);
  }
  auto read_only = api_->Handle({"POST", "/api/arrays/a/update", "0 1\n"});
  EXPECT_EQ(read_only.status, 403) << read_only.body;
}

TEST(ServeApiLimitsTest, PastALimitIs413) {
  ScratchDir dir;
  const std::string big = dir.File("big.npy");
  ASSERT_EQ(RunCli({"create", big, "--length", "2^20", "--dtype", "f4"}).exit_code, 0);
  auto arrays = ServedArrays::Open({dir.path()}, "", IoKind::kPread);  // a folder: its .npy files
  ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
  Api api(**arrays, ApiOptions{});
  for (const std::string& target : {std::string("/api/arrays/big/values?range=0:65537"),
                                    std::string("/api/arrays/big/overview?bins=65537&stat=sum"),
                                    std::string("/api/arrays/big/overview?bin_size=8&stat=sum"),
                                    "/api/arrays/big/stats?stat=sum" + std::string(33 * 9, 'x')}) {
    std::string t = target;
    if (t.find("xxx") != std::string::npos) {  // 33 stat= parameters
      t = "/api/arrays/big/stats?";
      for (int k = 0; k < 33; ++k) t += "stat=sum&";
    }
    auto r = api.Handle({"GET", t, ""});
    EXPECT_EQ(r.status, 413) << t << " " << r.body.substr(0, 200);
  }
  std::string many;
  for (int k = 0; k <= 65536; ++k) many += "0:1\n";
  EXPECT_EQ(api.Handle({"POST", "/api/arrays/big/ranges?stat=sum", many}).status, 413);
  EXPECT_EQ(api.Handle({"GET", "/api/arrays/big/values?range=0:65536", ""}).status, 200);
}

TEST_F(ServeApiTest, WritableUpdatesGoThroughTheLog) {
  Api writable(*arrays_, ApiOptions{true});
  auto r = writable.Handle({"POST", "/api/arrays/a/update", "0 1.5\n1 2.5\n"});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"applied\":2"), std::string::npos) << r.body;
  auto s = writable.Handle({"GET", "/api/arrays/a/stats?range=0:2&stat=sum", ""});
  EXPECT_NE(s.body.find("\"stats\":{\"sum\":4}"), std::string::npos) << s.body;
  auto bad = writable.Handle({"POST", "/api/arrays/a/update", "9999999 1\n"});
  EXPECT_EQ(bad.status, 400) << bad.body;
}

TEST_F(ServeApiTest, RemovedAndReplacedFiles) {
  const std::string other = dir_.File("other.npy");
  ASSERT_EQ(RunCli({"create", other, "--length", "10", "--dtype", "i4"}).exit_code, 0);
  ASSERT_EQ(RunCli({"set", other, "0", "1", "2", "3"}).exit_code, 0);
  std::filesystem::rename(other, path_);  // a.npy replaced: its sidecar belongs to the old file
  auto r = Get("/api/arrays/a/stats?stat=sum");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"range\":[0,10],\"stats\":{\"sum\":6}"), std::string::npos) << r.body;
  std::filesystem::remove(path_);
  auto gone = Get("/api/arrays/a/stats?stat=sum");
  EXPECT_EQ(gone.status, 404) << gone.body;
  EXPECT_NE(gone.body.find("was removed"), std::string::npos) << gone.body;
  EXPECT_EQ(Get("/api/arrays").status, 200);
}

TEST_F(ServeApiTest, ExplorerFilesAreCompiledIn) {
  auto r = Get("/");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<html"), std::string::npos);
  EXPECT_EQ(Get("/explorer/index.html").body, r.body);
  EXPECT_EQ(Get("/explorer/..%2Fapi.cc").status, 404);
}

}  // namespace
}  // namespace momenta::serve
