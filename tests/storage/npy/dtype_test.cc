// dtype: names, text <-> value with exact range checks, bytes <-> value.
#include "storage/npy/dtype.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr DType kAll[] = {DType::kF8, DType::kF4, DType::kI8, DType::kI4, DType::kI2,
                          DType::kI1, DType::kU8, DType::kU4, DType::kU2, DType::kU1};

// The text of a Status, or "OK".
std::string Text(const Status& s) { return s.ToString(); }

// Parses and expects success; returns the value.
Value Parse(DType t, std::string_view text) {
  auto v = ParseValue(t, text);
  EXPECT_OK(v) << DTypeName(t) << " '" << text << "': " << Text(v.status());
  return v.ok() ? *v : Value();
}

// Parses and expects failure; returns the message.
std::string ParseError(DType t, std::string_view text) {
  auto v = ParseValue(t, text);
  EXPECT_FALSE(v.ok()) << DTypeName(t) << " '" << text << "' parsed as " << FormatValue(*v);
  return v.ok() ? "" : Text(v.status());
}

bool SameValue(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::kInt:
      return a.i == b.i;
    case Value::Kind::kUInt:
      return a.u == b.u;
    case Value::Kind::kFloat:
      return std::memcmp(&a.f, &b.f, sizeof a.f) == 0 || (std::isnan(a.f) && std::isnan(b.f));
  }
  return false;
}

TEST(DTypeTest, NamesSizesAndDescrs) {
  const struct {
    DType t;
    const char* name;
    const char* long_name;
    size_t size;
    const char* descr;
  } kCases[] = {
      {DType::kF8, "f8", "float64", 8, "<f8"}, {DType::kF4, "f4", "float32", 4, "<f4"},
      {DType::kI8, "i8", "int64", 8, "<i8"},   {DType::kI4, "i4", "int32", 4, "<i4"},
      {DType::kI2, "i2", "int16", 2, "<i2"},   {DType::kI1, "i1", "int8", 1, "|i1"},
      {DType::kU8, "u8", "uint64", 8, "<u8"},  {DType::kU4, "u4", "uint32", 4, "<u4"},
      {DType::kU2, "u2", "uint16", 2, "<u2"},  {DType::kU1, "u1", "uint8", 1, "|u1"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(DTypeName(c.t), c.name);
    EXPECT_EQ(DTypeSize(c.t), c.size);
    EXPECT_EQ(DTypeDescr(c.t), c.descr);
    EXPECT_EQ(DTypeIsInteger(c.t), c.name[0] != 'f');
    EXPECT_EQ(DTypeIsSigned(c.t), c.name[0] != 'u');
    auto a = ParseDTypeName(c.name);
    auto b = ParseDTypeName(c.long_name);
    ASSERT_OK(a);
    ASSERT_OK(b);
    EXPECT_EQ(*a, c.t);
    EXPECT_EQ(*b, c.t);
  }
  for (const char* bad : {"", "f2", "F8", "<f8", "int", "float", "bool", "complex128"}) {
    auto r = ParseDTypeName(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(Text(r.status()).find("unknown dtype"), std::string::npos);
  }
}

TEST(DTypeTest, IntegerLiteralsOverTheFullRange) {
  EXPECT_EQ(Parse(DType::kI8, "-9223372036854775808").i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Parse(DType::kI8, "9223372036854775807").i, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Parse(DType::kU8, "18446744073709551615").u, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Parse(DType::kU8, "9007199254740993").u, 9007199254740993u);  // not a double
  EXPECT_EQ(Parse(DType::kI1, "-128").i, -128);
  EXPECT_EQ(Parse(DType::kI1, "+127").i, 127);
  EXPECT_EQ(Parse(DType::kU1, "255").u, 255u);
  EXPECT_EQ(Parse(DType::kU1, "-0").u, 0u);
  EXPECT_EQ(Parse(DType::kI4, "  42\r\n").i, 42);
  EXPECT_EQ(Parse(DType::kI2, "007").i, 7);
  EXPECT_EQ(Parse(DType::kI2, "-32768").kind, Value::Kind::kInt);
  EXPECT_EQ(Parse(DType::kU2, "65535").kind, Value::Kind::kUInt);
}

TEST(DTypeTest, FloatingLiteralsWithExactIntegralValues) {
  EXPECT_EQ(Parse(DType::kI4, "3.0").i, 3);
  EXPECT_EQ(Parse(DType::kI4, "1e3").i, 1000);
  EXPECT_EQ(Parse(DType::kI4, "-2.5e1").i, -25);
  EXPECT_EQ(Parse(DType::kI4, "0.5e1").i, 5);
  EXPECT_EQ(Parse(DType::kI4, ".5e1").i, 5);
  EXPECT_EQ(Parse(DType::kU1, "2.55E2").u, 255u);
  EXPECT_EQ(Parse(DType::kU1, "-0.0").u, 0u);
  EXPECT_EQ(Parse(DType::kU1, "0e999999999999999999").u, 0u);
  EXPECT_EQ(Parse(DType::kU8, "1.8446744073709551615e19").u, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(Parse(DType::kI8, "-9.223372036854775808e18").i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Parse(DType::kI8, "5.").i, 5);
  EXPECT_EQ(Parse(DType::kI8, "50000e-4").i, 5);
}

TEST(DTypeTest, IntegerDTypesRejectWhatDoesNotFit) {
  EXPECT_EQ(ParseError(DType::kU1, "300"), "Invalid argument: value '300' does not fit dtype u1");
  EXPECT_EQ(ParseError(DType::kU1, "256"), "Invalid argument: value '256' does not fit dtype u1");
  EXPECT_EQ(ParseError(DType::kI1, "-129"), "Invalid argument: value '-129' does not fit dtype i1");
  EXPECT_EQ(ParseError(DType::kU4, "-1"), "Invalid argument: value '-1' does not fit dtype u4");
  EXPECT_EQ(ParseError(DType::kI8, "9223372036854775808"),
            "Invalid argument: value '9223372036854775808' does not fit dtype i8");
  EXPECT_EQ(ParseError(DType::kI8, "-9223372036854775809"),
            "Invalid argument: value '-9223372036854775809' does not fit dtype i8");
  EXPECT_EQ(ParseError(DType::kU8, "18446744073709551616"),
            "Invalid argument: value '18446744073709551616' does not fit dtype u8");
  EXPECT_NE(ParseError(DType::kU8, "1e20").find("does not fit dtype u8"), std::string::npos);
  EXPECT_NE(ParseError(DType::kU8, "1e999999999999999999").find("does not fit"), std::string::npos);
  EXPECT_NE(ParseError(DType::kU8, "123456789012345678901234567890").find("does not fit"), std::string::npos);
  EXPECT_EQ(ParseError(DType::kI4, "1.5"), "Invalid argument: value '1.5' does not fit dtype i4 (not an integer)");
  EXPECT_NE(ParseError(DType::kI4, "1234.5e-1").find("not an integer"), std::string::npos);
  EXPECT_NE(ParseError(DType::kI4, "1e-999999999999").find("not an integer"), std::string::npos);
  for (const char* text : {"nan", "NaN", "-nan", "inf", "-inf", "Infinity"})
    EXPECT_EQ(ParseError(DType::kI8, text),
              "Invalid argument: value '" + std::string(text) + "' does not fit dtype i8 (not a finite number)");
}

TEST(DTypeTest, GarbageAndEmptyAreNotNumbers) {
  for (DType t : kAll) {
    EXPECT_EQ(ParseError(t, "abc"), "Invalid argument: 'abc' is not a number");
    EXPECT_EQ(ParseError(t, ""), "Invalid argument: empty value is not a number");
    EXPECT_EQ(ParseError(t, "   "), "Invalid argument: empty value is not a number");
    for (const char* text : {"1x", "--1", "+-1", "1 2", "1e", "e5", ".", "-", "1,5", "0x"})
      EXPECT_NE(ParseError(t, text).find("is not a number"), std::string::npos) << DTypeName(t) << " '" << text << "'";
  }
  // Integer dtypes read decimal only; hex is not taken for a number.
  EXPECT_NE(ParseError(DType::kI4, "0x10").find("is not a number"), std::string::npos);
  // A NUL inside the text does not cut it short.
  EXPECT_NE(ParseError(DType::kF8, std::string_view("1\0"
                                                    "2",
                                                    3))
                .find("not a number"),
            std::string::npos);
  // Messages stay one line and short whatever the input.
  const std::string msg = ParseError(DType::kF8, "x\n" + std::string(1000, 'y'));
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_LT(msg.size(), 120u);
}

TEST(DTypeTest, FloatDTypes) {
  EXPECT_EQ(Parse(DType::kF8, "0.1").f, 0.1);
  EXPECT_EQ(Parse(DType::kF8, "-1e308").f, -1e308);
  EXPECT_EQ(Parse(DType::kF8, "4.9e-324").f, std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(Parse(DType::kF8, "1e-400").f, 0.0);  // underflow rounds to nearest
  EXPECT_TRUE(std::signbit(Parse(DType::kF8, "-0").f));
  EXPECT_TRUE(std::isnan(Parse(DType::kF8, "nan").f));
  EXPECT_EQ(Parse(DType::kF8, "inf").f, std::numeric_limits<double>::infinity());
  EXPECT_EQ(Parse(DType::kF8, "-inf").f, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Parse(DType::kF8, "0x1p-2").f, 0.25);  // strtod takes hex floats
  EXPECT_EQ(Parse(DType::kF8, "17").kind, Value::Kind::kFloat);
  EXPECT_NE(ParseError(DType::kF8, "1e400").find("does not fit dtype f8"), std::string::npos);

  // f4 holds the float nearest to the text, and rejects only what rounds to inf.
  EXPECT_EQ(Parse(DType::kF4, "0.1").f, static_cast<double>(0.1f));
  EXPECT_EQ(Parse(DType::kF4, "3.4028235e38").f, static_cast<double>(FLT_MAX));
  EXPECT_EQ(Parse(DType::kF4, "1e-50").f, 0.0);
  EXPECT_TRUE(std::isnan(Parse(DType::kF4, "nan").f));
  EXPECT_EQ(Parse(DType::kF4, "-inf").f, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParseError(DType::kF4, "3.5e38"), "Invalid argument: value '3.5e38' does not fit dtype f4");
  EXPECT_EQ(ParseError(DType::kF4, "-1e39"), "Invalid argument: value '-1e39' does not fit dtype f4");
}

TEST(DTypeTest, ValueFromDouble) {
  auto ok = [](DType t, double d) {
    auto v = ValueFromDouble(t, d);
    EXPECT_OK(v) << DTypeName(t) << " " << d << ": " << Text(v.status());
    return v.ok() ? *v : Value();
  };
  auto bad = [](DType t, double d) {
    auto v = ValueFromDouble(t, d);
    EXPECT_FALSE(v.ok()) << DTypeName(t) << " " << d;
    return v.ok() ? std::string() : Text(v.status());
  };
  EXPECT_EQ(ok(DType::kU1, 255.0).u, 255u);
  EXPECT_EQ(ok(DType::kU1, -0.0).u, 0u);
  EXPECT_EQ(ok(DType::kI8, -9223372036854775808.0).i, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ok(DType::kU8, 18446744073709549568.0).u, 18446744073709549568u);  // largest < 2^64
  EXPECT_EQ(bad(DType::kU1, 300), "Invalid argument: value '300' does not fit dtype u1");
  EXPECT_EQ(bad(DType::kI4, 1.5), "Invalid argument: value '1.5' does not fit dtype i4 (not an integer)");
  EXPECT_EQ(bad(DType::kI4, NAN), "Invalid argument: value 'nan' does not fit dtype i4 (not a finite number)");
  bad(DType::kI8, 9223372036854775808.0);   // 2^63
  bad(DType::kU8, 18446744073709551616.0);  // 2^64
  bad(DType::kU8, -1.0);
  bad(DType::kI4, INFINITY);
  EXPECT_EQ(ok(DType::kF4, 0.1).f, static_cast<double>(0.1f));
  EXPECT_TRUE(std::isinf(ok(DType::kF4, INFINITY).f));
  EXPECT_TRUE(std::isnan(ok(DType::kF4, NAN).f));
  EXPECT_EQ(bad(DType::kF4, 1e39), "Invalid argument: value '1e+39' does not fit dtype f4");
  EXPECT_EQ(ok(DType::kF8, 1e300).f, 1e300);
  EXPECT_TRUE(std::isnan(ok(DType::kF8, NAN).f));
}

TEST(DTypeTest, ValueFits) {
  EXPECT_TRUE(ValueFits(DType::kU1, Value::Int(255)));
  EXPECT_FALSE(ValueFits(DType::kU1, Value::Int(-1)));
  EXPECT_FALSE(ValueFits(DType::kI8, Value::UInt(uint64_t{1} << 63)));
  EXPECT_TRUE(ValueFits(DType::kU8, Value::UInt(~uint64_t{0})));
  EXPECT_TRUE(ValueFits(DType::kI2, Value::Float(-32768.0)));
  EXPECT_FALSE(ValueFits(DType::kI2, Value::Float(0.5)));
  EXPECT_TRUE(ValueFits(DType::kF4, Value::Int(-5)));
  EXPECT_FALSE(ValueFits(DType::kF4, Value::Float(DBL_MAX)));
  EXPECT_TRUE(ValueFits(DType::kF8, Value::Float(DBL_MAX)));
}

TEST(DTypeTest, FormatValueIsShortestRoundTrip) {
  EXPECT_EQ(FormatValue(Value::Float(0.1)), "0.1");
  EXPECT_EQ(FormatValue(Value::Float(-0.0)), "-0");
  EXPECT_EQ(FormatValue(Value::Float(1e300)), "1e+300");
  EXPECT_EQ(FormatValue(Value::Float(NAN)), "nan");
  EXPECT_EQ(FormatValue(Value::Float(-NAN)), "nan");
  EXPECT_EQ(FormatValue(Value::Float(-INFINITY)), "-inf");
  EXPECT_EQ(FormatValue(Value::Int(-7)), "-7");
  EXPECT_EQ(FormatValue(Value::UInt(~uint64_t{0})), "18446744073709551615");
  EXPECT_EQ(FormatValue(Value::Float(static_cast<double>(0.1f))), "0.10000000149011612");
  EXPECT_EQ(FormatValue(DType::kF4, Value::Float(static_cast<double>(0.1f))), "0.1");
  EXPECT_EQ(FormatValue(DType::kF4, Value::Float(static_cast<double>(FLT_MAX))), "3.4028235e+38");
  EXPECT_EQ(FormatValue(DType::kI4, Value::Int(300)), "300");
}

// Random values of every dtype survive value -> bytes -> value and
// value -> text -> value unchanged.
TEST(DTypeTest, RandomRoundTrips) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  for (DType t : kAll) {
    for (int k = 0; k < 2000; ++k) {
      // Random bytes are a random element (all NaN payloads included).
      char bytes[8];
      const uint64_t r = rng();
      std::memcpy(bytes, &r, sizeof r);
      if (k < 4) std::memset(bytes, k == 0 ? 0x00 : k == 1 ? 0xff : k == 2 ? 0x80 : 0x7f, 8);
      const Value v = DecodeValue(t, bytes);
      ASSERT_TRUE(ValueFits(t, v)) << DTypeName(t) << " " << FormatValue(v);
      char again[8] = {};
      EncodeValue(t, v, again);
      if (!(v.kind == Value::Kind::kFloat && std::isnan(v.f))) {
        ASSERT_EQ(std::memcmp(bytes, again, DTypeSize(t)), 0) << DTypeName(t) << " " << FormatValue(v);
      }
      for (const std::string& text : {FormatValue(v), FormatValue(t, v)}) {
        auto parsed = ParseValue(t, text);
        ASSERT_OK(parsed) << DTypeName(t) << " '" << text << "': " << Text(parsed.status());
        ASSERT_TRUE(SameValue(*parsed, v)) << DTypeName(t) << " '" << text << "' came back as " << FormatValue(*parsed);
      }
      const double d = DecodeDouble(t, bytes);
      if (v.kind == Value::Kind::kFloat && std::isnan(v.f)) {
        ASSERT_TRUE(std::isnan(d));
      } else {
        ASSERT_EQ(d, static_cast<double>(v.AsLongDouble())) << DTypeName(t);
      }
    }
  }
}

TEST(DTypeTest, DecodeDoublesMatchesDecodeDouble) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<char> bytes(8 * 100);
  for (char& b : bytes) b = static_cast<char>(rng());
  for (DType t : kAll) {
    const size_t n = bytes.size() / DTypeSize(t);
    std::vector<double> all(n);
    DecodeDoubles(t, bytes.data(), n, all.data());
    for (size_t k = 0; k < n; ++k) {
      const double one = DecodeDouble(t, bytes.data() + k * DTypeSize(t));
      ASSERT_TRUE(std::memcmp(&one, &all[k], sizeof one) == 0) << DTypeName(t) << " #" << k;
    }
  }
}

TEST(DTypeTest, EncodesLittleEndianTwosComplement) {
  char b[8] = {};
  EncodeValue(DType::kI2, Value::Int(-2), b);
  EXPECT_EQ(std::string(b, 2), std::string("\xfe\xff", 2));
  EncodeValue(DType::kU4, Value::UInt(0x01020304), b);
  EXPECT_EQ(std::string(b, 4), std::string("\x04\x03\x02\x01", 4));
  EncodeValue(DType::kI8, Value::Float(-1.0), b);  // any kind that fits
  EXPECT_EQ(std::string(b, 8), std::string(8, '\xff'));
  EncodeValue(DType::kF8, Value::Float(1.0), b);
  EXPECT_EQ(std::string(b, 8), std::string("\0\0\0\0\0\0\xf0\x3f", 8));
  EncodeValue(DType::kF4, Value::Int(1), b);
  EXPECT_EQ(std::string(b, 4), std::string("\0\0\x80\x3f", 4));
  EXPECT_EQ(DecodeValue(DType::kI1, "\x80").i, -128);
  EXPECT_EQ(DecodeValue(DType::kU1, "\x80").u, 128u);
}

}  // namespace
}  // namespace momenta
