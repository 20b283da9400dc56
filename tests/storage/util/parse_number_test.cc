// storage/util/parse_number.h: the one parser of numbers in text. Integers
// against their exact limits, reals against strtod in the C locale, and the
// whole text required by both.
#include "storage/util/parse_number.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace momenta {
namespace {

template <typename T>
bool Int(std::string_view text, T expected) {
  T v{};
  return ParseInteger(text, &v) && v == expected;
}

template <typename T>
bool NotInt(std::string_view text) {
  T v{};
  return !ParseInteger(text, &v);
}

TEST(ParseNumberTest, IntegersAreTheWholeTextInRange) {
  EXPECT_TRUE(Int<int64_t>("0", 0));
  EXPECT_TRUE(Int<int64_t>("-7", -7));
  EXPECT_TRUE(Int<int64_t>("9223372036854775807", std::numeric_limits<int64_t>::max()));
  EXPECT_TRUE(Int<int64_t>("-9223372036854775808", std::numeric_limits<int64_t>::min()));
  EXPECT_TRUE(Int<uint64_t>("18446744073709551615", std::numeric_limits<uint64_t>::max()));
  EXPECT_TRUE(Int<unsigned>("65535", 65535u));
  EXPECT_TRUE(Int<int64_t>("007", 7));
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1x", "0x10", "1e3", "1.0", "9223372036854775808"})
    EXPECT_TRUE(NotInt<int64_t>(bad)) << "'" << bad << "'";
  EXPECT_TRUE(NotInt<uint64_t>("-1"));
  EXPECT_TRUE(NotInt<uint64_t>("18446744073709551616"));
  EXPECT_TRUE(NotInt<uint8_t>("256"));
}

TEST(ParseNumberTest, RealsAreWhatStrtodReadsWhole) {
  double v = 0;
  bool overflow = true;
  ASSERT_TRUE(ParseReal("0.1", &v, &overflow));
  EXPECT_EQ(v, 0.1);
  EXPECT_FALSE(overflow);
  ASSERT_TRUE(ParseReal("+1.5e3", &v));
  EXPECT_EQ(v, 1500.0);
  ASSERT_TRUE(ParseReal("-0x1p-2", &v));
  EXPECT_EQ(v, -0.25);
  ASSERT_TRUE(ParseReal("inf", &v));
  EXPECT_EQ(v, std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseReal("-Infinity", &v));
  EXPECT_EQ(v, -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseReal("nan", &v));
  EXPECT_TRUE(std::isnan(v));
  for (const char* bad : {"", "-", "1.5x", "1,5", "1e", "1 2", "nan(", "0x"})
    EXPECT_FALSE(ParseReal(bad, &v)) << "'" << bad << "'";
}

TEST(ParseNumberTest, OverflowIsInfinityAndSaidUnderflowRoundsQuietly) {
  double v = 0;
  bool overflow = false;
  ASSERT_TRUE(ParseReal("1e400", &v, &overflow));
  EXPECT_TRUE(overflow);
  EXPECT_EQ(v, std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseReal("-1e400", &v, &overflow));
  EXPECT_TRUE(overflow);
  ASSERT_TRUE(ParseReal("1e-400", &v, &overflow));
  EXPECT_FALSE(overflow);
  EXPECT_EQ(v, 0.0);
  ASSERT_TRUE(ParseReal("inf", &v, &overflow));
  EXPECT_FALSE(overflow) << "an infinity written as such is not an overflow";
  float f = 0;
  ASSERT_TRUE(ParseReal("1e39", &f, &overflow));
  EXPECT_TRUE(overflow) << "past float's range, within double's";
  ASSERT_TRUE(ParseReal("0.1", &f, &overflow));
  EXPECT_EQ(f, 0.1f) << "read as a float, not a double rounded to float";
  EXPECT_FALSE(overflow);
}

}  // namespace
}  // namespace momenta
