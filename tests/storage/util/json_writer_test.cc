// storage/util/json_writer.h: the JSON every --json output and every root answer
// is written with: separators, nesting, escapes, exact numbers.
#include "storage/util/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace momenta {
namespace {

TEST(JsonWriterTest, ObjectsAndArraysNestWithCommasOnlyBetweenElements) {
  JsonWriter j;
  j.BeginObject().Key("a").Int(-1).Key("b").BeginArray().UInt(2).BeginObject().EndObject().BeginArray().EndArray();
  j.EndArray().Key("c").Bool(true).Key("d").Null().EndObject();
  EXPECT_EQ(j.str(), R"({"a":-1,"b":[2,{},[]],"c":true,"d":null})");
}

TEST(JsonWriterTest, StringsAreEscapedPerRfc8259) {
  JsonWriter j;
  j.BeginArray().String("q\"b\\n\nr\rt\t").String(std::string_view("\x01\x1f", 2)).String("é").EndArray();
  EXPECT_EQ(j.str(), "[\"q\\\"b\\\\n\\nr\\rt\\t\",\"\\u0001\\u001f\",\"é\"]");
}

TEST(JsonWriterTest, DoublesAreShortestRoundTripAndNonFiniteAreStrings) {
  JsonWriter j;
  j.BeginArray().Double(0.1).Double(1.0 / 3).Double(1e300).Double(-0.0).Double(std::nan(""));
  j.Double(std::numeric_limits<double>::infinity()).Double(-std::numeric_limits<double>::infinity()).EndArray();
  EXPECT_EQ(j.str(), R"([0.1,0.3333333333333333,1e+300,-0,"NaN","Infinity","-Infinity"])");
}

TEST(JsonWriterTest, ElementValuesKeepTheirKind) {
  JsonWriter j;
  j.BeginArray().ElementValue(Value::Int(-5)).ElementValue(Value::UInt(18446744073709551615u));
  j.ElementValue(Value::Float(2.5)).EndArray();
  EXPECT_EQ(j.str(), "[-5,18446744073709551615,2.5]");
}

}  // namespace
}  // namespace momenta
