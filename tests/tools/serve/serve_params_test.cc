// The query-parameter parser of `momenta serve` (tools/serve/params.h):
// targets split and decoded, limits, and the typed getters' values and
// one-line errors.
#include <gtest/gtest.h>

#include "tools/serve/params.h"

namespace momenta::serve {
namespace {

// The value of an accepted parse (a failure fails the test and gives T{}).
template <class T>
T Must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : T{};
}

TEST(ServeParamsTest, SplitsAndDecodesSegmentsAndParameters) {
  auto t = ParseTarget("/api//arrays/a%2Fb/stats/?range=0%3A10&stat=mean&stat=std&skipna&x=a+b%20c");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->segments, (std::vector<std::string>{"api", "arrays", "a/b", "stats"}));
  ASSERT_EQ(t->params.size(), 5u);
  EXPECT_EQ(*t->Get("range"), "0:10");
  EXPECT_EQ(t->All("stat"), (std::vector<std::string>{"mean", "std"}));
  EXPECT_EQ(*t->Get("skipna"), "");
  EXPECT_EQ(*t->Get("x"), "a b c");
  EXPECT_EQ(t->Get("absent"), nullptr);
}

TEST(ServeParamsTest, TraversalStaysOneSegment) {
  auto t = ParseTarget("/api/arrays/..%2F..%2Fetc%2Fpasswd");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->segments.size(), 3u);
  EXPECT_EQ(t->segments[2], "../../etc/passwd");
}

TEST(ServeParamsTest, BadEscapesAndTargetsAreOneLineErrors) {
  for (const char* bad : {"/a%G1", "/a?b=%2", "/a?%", "api/arrays", ""}) {
    auto t = ParseTarget(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_EQ(t.status().ToString().find('\n'), std::string::npos);
  }
}

// Found by the fuzz target: a newline in a stat name made a two-line error.
TEST(ServeParamsTest, ControlCharactersAreRefused) {
  for (const char* bad : {"/x?stat=me%0Aan", "/x?st%00at=mean", "/a%0Db/stats", "/x?stat=mean\x01"}) {
    auto t = ParseTarget(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().ToString().find("control character"), std::string::npos);
    EXPECT_EQ(t.status().ToString().find('\n'), std::string::npos);
  }
}

TEST(ServeParamsTest, LimitsSayTooLarge) {
  std::string many = "/a?";
  for (size_t k = 0; k <= kMaxParams; ++k) many += "k=v&";
  bool too_large = false;
  EXPECT_FALSE(ParseTarget(many, &too_large).ok());
  EXPECT_TRUE(too_large);
  std::string deep;
  for (size_t k = 0; k <= kMaxSegments; ++k) deep += "/s";
  EXPECT_FALSE(ParseTarget(deep, &too_large).ok());
  EXPECT_TRUE(too_large);
  EXPECT_FALSE(ParseTarget("/%zz", &too_large).ok());
  EXPECT_FALSE(too_large);
}

TEST(ServeParamsTest, FlagsAndCounts) {
  auto t = ParseTarget("/x?a=1&b=0&c=true&d=&e=yes&n=2^10&m=-1&big=5000");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(Must(GetFlag(*t, "a")));
  EXPECT_FALSE(Must(GetFlag(*t, "b")));
  EXPECT_TRUE(Must(GetFlag(*t, "c")));
  EXPECT_TRUE(Must(GetFlag(*t, "d")));
  EXPECT_FALSE(Must(GetFlag(*t, "absent")));
  EXPECT_FALSE(GetFlag(*t, "e").ok());
  EXPECT_EQ(Must(GetCount(*t, "n", 1, 1 << 20, 7)), 1024u);
  EXPECT_EQ(Must(GetCount(*t, "absent", 1, 10, 7)), 7u);
  EXPECT_FALSE(GetCount(*t, "m", 0, 10, 0).ok());
  auto big = GetCount(*t, "big", 1, 4096, 0);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().ToString(), "Invalid argument: big: '5000' is not in range 1 to 4096");
}

TEST(ServeParamsTest, StatRequestAsTheCliTakesIt) {
  auto t = ParseTarget("/x?stat=moments&stat=var&order=3&about=12.5&ddof=1&degree=2&skipna=1");
  ASSERT_TRUE(t.ok());
  auto r = GetStatRequest(*t, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats, (std::vector<Stat>{Stat::kMoments, Stat::kVar}));
  EXPECT_EQ(r->params.order, 3);
  EXPECT_EQ(r->params.about, 12.5L);
  EXPECT_EQ(r->params.ddof, 1);
  EXPECT_EQ(r->params.degree, 2);
  EXPECT_TRUE(r->params.skipna);
  auto none = GetStatRequest(Must(ParseTarget("/x")), true);
  EXPECT_FALSE(none.ok());
  auto dflt = GetStatRequest(Must(ParseTarget("/x")), false, Stat::kMean);
  ASSERT_TRUE(dflt.ok());
  EXPECT_EQ(dflt->stats, std::vector<Stat>{Stat::kMean});
  auto bad = GetStatRequest(Must(ParseTarget("/x?stat=median")), true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("median"), std::string::npos);
  EXPECT_FALSE(GetStatRequest(Must(ParseTarget("/x?stat=sum&about=inf")), true).ok());
  EXPECT_FALSE(GetStatRequest(Must(ParseTarget("/x?stat=sum&order=9")), true).ok());
}

}  // namespace
}  // namespace momenta::serve
