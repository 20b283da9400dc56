// ParseRangeLine: the lines `momenta query --ranges` reads, good and bad.
#include "tools/range_lines.h"

#include <gtest/gtest.h>

#include "tests/assert_ok.h"

namespace momenta::cli {
namespace {

TEST(RangeLinesTest, SlicesAndObjects) {
  auto a = ParseRangeLine("10:20", 100, "r:1");
  ASSERT_OK(a);
  EXPECT_FALSE(a->blank);
  EXPECT_EQ(a->range, (IndexRange{10, 20}));
  EXPECT_FALSE(a->stats.has_value());
  EXPECT_EQ(ParseRangeLine("  -10: \r", 100, "r:1")->range, (IndexRange{90, 100}));
  auto b = ParseRangeLine(R"({"range": [5, 2^3]})", 100, "r:1");
  EXPECT_FALSE(b.ok());  // integers in an array, not index expressions
  auto c = ParseRangeLine(R"({ "range" : [5, -1], "stat" : ["mean", "var"] })", 100, "r:1");
  ASSERT_OK(c);
  EXPECT_EQ(c->range, (IndexRange{5, 99}));
  ASSERT_TRUE(c->stats.has_value());
  EXPECT_EQ(*c->stats, (std::vector<Stat>{Stat::kMean, Stat::kVar}));
  auto d = ParseRangeLine(R"({"stat":"max","range":"2^3:"})", 100, "r:1");
  ASSERT_OK(d);
  EXPECT_EQ(d->range, (IndexRange{8, 100}));
  EXPECT_EQ(*d->stats, (std::vector<Stat>{Stat::kMax}));
  EXPECT_TRUE(ParseRangeLine("", 100, "r:1")->blank);
  EXPECT_TRUE(ParseRangeLine("   # a comment", 100, "r:1")->blank);
}

TEST(RangeLinesTest, BadLinesSayWhatAndWhere) {
  struct Bad {
    const char* line;
    Status::Code code;
    const char* says;
  };
  const Bad bad[] = {
      {"10-20", Status::Code::kInvalidArgument, "r:7: '10-20' is not of the form P:Q"},
      {"50:200", Status::Code::kOutOfRange, "r:7: '50:200' is not a range of the array (length 100)"},
      {"20:10", Status::Code::kOutOfRange, "not a range of the array"},
      {R"({"range":[1,2],"stat":"median"})", Status::Code::kInvalidArgument, "unknown statistic 'median'"},
      {R"({"range":[1,2],"bins":3})", Status::Code::kInvalidArgument, "unknown field \"bins\" (range, stat)"},
      {R"({"stat":"sum"})", Status::Code::kInvalidArgument, "r:7: the object has no \"range\""},
      {R"({"range":[1,2]} x)", Status::Code::kInvalidArgument, "text after the object at column 17"},
      {R"({"range":[1,2)", Status::Code::kInvalidArgument, "\"range\" must hold two integers"},
      {R"({"range":[1,2],"range":[3,4]})", Status::Code::kInvalidArgument, "\"range\" given twice"},
      {R"({"range":[1,2],"stat":[]})", Status::Code::kInvalidArgument, "\"stat\" names no statistic"},
      {R"({"ra\"nge":[1,2]})", Status::Code::kInvalidArgument, "escapes in strings are not supported"},
      {R"({"range":"1:2)", Status::Code::kInvalidArgument, "a string does not end"},
  };
  for (const Bad& b : bad) {
    auto r = ParseRangeLine(b.line, 100, "r:7");
    ASSERT_FALSE(r.ok()) << b.line;
    EXPECT_EQ(r.status().code(), b.code) << b.line << ": " << r.status().ToString();
    EXPECT_NE(r.status().ToString().find(b.says), std::string::npos) << b.line << ": " << r.status().ToString();
  }
}

}  // namespace
}  // namespace momenta::cli
