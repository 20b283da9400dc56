// The time axis of `momenta serve` (tools/serve/time_axis.h): --rate and
// --start parsed (numbers, ISO-8601 UTC, per array or for all), bad values a
// one-line usage error (exit 2) before serving, and GET /api/arrays listing
// each array's rate and start only when it has them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "storage/io/io_backend.h"
#include "tests/test_util.h"
#include "tools/serve/api.h"
#include "tools/serve/served_arrays.h"
#include "tools/serve/time_axis.h"

namespace momenta::serve {
namespace {

using testing::RunCli;
using testing::ScratchDir;

// The value of a parse expected to succeed (NaN, and a failure, when it did not).
double Value(Result<double> r) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::nan("");
}

TEST(ServeTimeAxisTest, ParsesInstants) {
  // 2026-01-02 is day 20455 since 1970-01-01.
  EXPECT_EQ(Value(ParseInstant("2026-01-02T03:04:05.5Z")), 20455.0 * 86400 + 3 * 3600 + 4 * 60 + 5.5);
  EXPECT_EQ(Value(ParseInstant("2026-01-02")), 20455.0 * 86400);
  EXPECT_EQ(Value(ParseInstant("1970-01-01T00:00:00Z")), 0.0);
  EXPECT_EQ(Value(ParseInstant("2024-02-29T23:59:59.25Z")), 19782.0 * 86400 + 86399.25);
  EXPECT_EQ(Value(ParseInstant("1969-12-31T23:59:59Z")), -1.0);
  EXPECT_EQ(Value(ParseInstant("1767323045.5")), 1767323045.5);
  EXPECT_EQ(Value(ParseInstant("-12")), -12.0);
  for (const char* bad : {"", "noon", "2026-13-01", "2025-02-29", "2026-01-02T03:04:05", "2026-01-02T24:00:00Z",
                          "2026-01-02T03:04:05.Z", "2026-01-02T03:04Z", "2026-01-02 03:04:05Z", "inf", " 5", "5s"}) {
    auto r = ParseInstant(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << bad;
  }
}

TEST(ServeTimeAxisTest, ParsesRates) {
  EXPECT_EQ(Value(ParseRate("1000")), 1000.0);
  EXPECT_EQ(Value(ParseRate("44.1e3")), 44100.0);
  EXPECT_EQ(Value(ParseRate("0.5")), 0.5);
  for (const char* bad : {"", "0", "-5", "nan", "inf", "1kHz", "1e999"}) EXPECT_FALSE(ParseRate(bad).ok()) << bad;
}

TEST(ServeTimeAxisTest, ResolvesPerArrayAndForAll) {
  const std::vector<std::string> names = {"a", "b", "c"};
  auto axes = ResolveTimeAxes({"100", "b=8"}, {"10", "c=2026-01-02"}, names);
  ASSERT_TRUE(axes.ok()) << axes.status().ToString();
  ASSERT_EQ(axes->size(), 3u);
  EXPECT_EQ(axes->at("a").rate, 100.0);
  EXPECT_EQ(axes->at("a").start, 10.0);
  EXPECT_EQ(axes->at("b").rate, 8.0);
  EXPECT_EQ(axes->at("b").start, 10.0);
  EXPECT_EQ(axes->at("c").rate, 100.0);
  EXPECT_EQ(axes->at("c").start, 20455.0 * 86400);
  auto only_b = ResolveTimeAxes({"b=8"}, {"b=0"}, names);
  ASSERT_TRUE(only_b.ok());
  EXPECT_EQ(only_b->size(), 1u);
  auto none = ResolveTimeAxes({}, {}, names);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ServeTimeAxisTest, RejectsWhatCannotBeAnAxis) {
  const std::vector<std::string> names = {"a", "b"};
  struct Case {
    std::vector<std::string> rates, starts;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"x=5"}, {"0"}, "--rate: 'x=5': no served array is named 'x'"},
           {{"fast"}, {"0"}, "--rate: 'fast': not a rate in hertz"},
           {{"a=0"}, {"0"}, "--rate: a='0': not a rate in hertz"},
           {{"5"}, {"yesterday"}, "--start: 'yesterday': neither seconds since the epoch nor an ISO-8601"},
           {{"5", "6"}, {"0"}, "--rate: '6': given twice for every array"},
           {{"a=5", "a=6"}, {"0"}, "--rate: 'a=6': given twice for a"},
           {{"5"}, {}, "--rate: a has a rate but no --start"},
           {{"a=5"}, {"0"}, "--start: b has a start but no --rate"},
       }) {
    auto r = ResolveTimeAxes(c.rates, c.starts, names);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().ToString().find(c.says), std::string::npos) << r.status().ToString();
  }
}

TEST(ServeTimeAxisTest, ValuesAreCheckedBeforeNames) {
  EXPECT_TRUE(CheckTimeAxisValues({"5", "x=2"}, {"0", "y=2026-01-02"}).ok());
  auto r = CheckTimeAxisValues({"x=-2"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.ToString(), "Invalid argument: --rate: x='-2': not a rate in hertz (a number > 0)");
  EXPECT_FALSE(CheckTimeAxisValues({}, {"soon"}).ok());
}

TEST(ServeTimeAxisTest, BadFlagsAreAUsageError) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  ASSERT_EQ(RunCli({"create", path, "--length", "100", "--dtype", "f8"}).exit_code, 0);
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"--rate", "0", "--start", "0"},
                                             {"--rate", "10", "--start", "2026-02-30T00:00:00Z"},
                                             {"--rate", "nope=10", "--start", "0"},
                                             {"--rate", "10"}}) {
    std::vector<std::string> args = {"serve", path, "--listen", "127.0.0.1:0"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << flags[1] << ": " << r.err;
    EXPECT_NE(r.err.find("momenta: Invalid argument: --"), std::string::npos) << r.err;
  }
  // A bad value is told before the arrays are opened (a missing file is not reached).
  auto r = RunCli({"serve", dir.File("missing.npy"), "--rate", "0", "--start", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--rate: '0': not a rate in hertz"), std::string::npos) << r.err;
}

TEST(ServeTimeAxisTest, ListsRateAndStartOnlyWhenGiven) {
  ScratchDir dir;
  for (const char* name : {"a.npy", "b.npy"})
    ASSERT_EQ(RunCli({"create", dir.File(name), "--length", "100", "--dtype", "f8"}).exit_code, 0);
  auto arrays = ServedArrays::Open({dir.File("a.npy"), dir.File("b.npy")}, "", IoKind::kPread);
  ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
  auto axes = ResolveTimeAxes({"a=1000"}, {"a=2026-01-02T03:04:05.5Z"}, (*arrays)->Names());
  ASSERT_TRUE(axes.ok()) << axes.status().ToString();
  (*arrays)->SetTimeAxes(*axes);
  Api api(**arrays, ApiOptions{});
  auto r = api.Handle({"GET", "/api/arrays", ""});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"levels\":"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("},\"rate\":1000,\"start\":1767323045.5},{\"name\":\"b\""), std::string::npos) << r.body;
  const std::string b = r.body.substr(r.body.find("{\"name\":\"b\""));
  EXPECT_EQ(b.find("rate"), std::string::npos) << b;
  EXPECT_EQ(b.find("start"), std::string::npos) << b;
}

}  // namespace
}  // namespace momenta::serve
