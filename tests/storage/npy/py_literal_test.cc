// ParsePyLiteral (storage/npy/py_literal.h) directly: the literals NumPy's .npy
// reader accepts through ast.literal_eval, each with the value Python gives
// (the references are what `ast.literal_eval` returns in Python 3.11), and
// the one-line refusals of what it refuses. Random nestings (seed printed)
// round-trip through their own printed form.
#include "storage/npy/py_literal.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace momenta {
namespace {

using Kind = PyLiteral::Kind;

PyLiteral Parse(std::string_view text, PyHeaderText encoding = PyHeaderText::kUtf8) {
  PyLiteral out;
  std::string error;
  EXPECT_TRUE(ParsePyLiteral(text, encoding, &out, &error)) << text << ": " << error;
  return out;
}

std::string Refusal(std::string_view text, PyHeaderText encoding = PyHeaderText::kUtf8) {
  PyLiteral out;
  std::string error;
  EXPECT_FALSE(ParsePyLiteral(text, encoding, &out, &error)) << text;
  return error;
}

TEST(PyLiteralTest, ANumpyHeaderDict) {
  const PyLiteral d = Parse("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }");
  ASSERT_EQ(d.kind, Kind::kDict);
  ASSERT_EQ(d.items.size(), 6u);  // key, value, key, value, ...
  EXPECT_EQ(d.items[0].text, "descr");
  EXPECT_EQ(d.items[1].kind, Kind::kStr);
  EXPECT_EQ(d.items[1].text, "<f8");
  EXPECT_EQ(d.items[3].kind, Kind::kBool);
  EXPECT_FALSE(d.items[3].flag);
  ASSERT_EQ(d.items[5].kind, Kind::kTuple);
  ASSERT_EQ(d.items[5].items.size(), 2u);
  EXPECT_EQ(d.items[5].items[0].magnitude, 3u);
  EXPECT_EQ(d.items[5].items[1].magnitude, 4u);
  // A repeated key appears twice, in source order (Python keeps the last value).
  const PyLiteral twice = Parse("{'a': 1, 'a': 2}");
  ASSERT_EQ(twice.items.size(), 4u);
  EXPECT_EQ(twice.items[3].magnitude, 2u);
}

TEST(PyLiteralTest, IntegersAsPythonReadsThem) {
  // ast.literal_eval: 0x_ff == 255, 0o17 == 15, 0b101 == 5, 1_000 == 1000, -7 == -7.
  const struct {
    const char* text;
    bool negative;
    uint64_t magnitude;
  } cases[] = {{"0x_ff", false, 255},
               {"0o17", false, 15},
               {"0b101", false, 5},
               {"1_000", false, 1000},
               {"-7", true, 7},
               {"- 0", false, 0},
               {"18446744073709551615", false, 18446744073709551615u}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const PyLiteral v = Parse(c.text);
    EXPECT_EQ(v.kind, Kind::kInt);
    EXPECT_EQ(v.negative, c.negative);
    EXPECT_EQ(v.magnitude, c.magnitude);
    EXPECT_FALSE(v.huge);
  }
  EXPECT_TRUE(Parse("18446744073709551616").huge);  // 2^64
  EXPECT_EQ(Parse("1.5e3").kind, Kind::kFloat);
  EXPECT_EQ(Parse("1-2j").kind, Kind::kComplex);
  // Python 2's long suffix is dropped before parsing, for headers of format 1.0 and 2.0 only.
  EXPECT_EQ(Parse("(3L, 4L)", PyHeaderText::kLatin1Python2).items[0].magnitude, 3u);
  EXPECT_NE(Refusal("(3L, 4L)"), "");
  EXPECT_NE(Refusal("012"), "");  // leading zeros: a SyntaxError in Python 3
}

TEST(PyLiteralTest, StringsBytesAndEscapes) {
  EXPECT_EQ(Parse(R"('a\x41\101\u00e9')").text, "aAA\xc3\xa9");  // 'aAAé'
  EXPECT_EQ(Parse(R"(r'\x41')").text, R"(\x41)");
  EXPECT_EQ(Parse(R"('a' "b" '''c''')").text, "abc");  // implicit concatenation
  const PyLiteral b = Parse(R"(b'\x00\xff')");
  EXPECT_EQ(b.kind, Kind::kBytes);
  EXPECT_EQ(b.text, std::string("\x00\xff", 2));
  EXPECT_EQ(Parse(R"('\q')").text, R"(\q)");  // an unknown escape is kept
  EXPECT_NE(Refusal("b'a' 'b'").find("bytes and str literals mixed"), std::string::npos);
  EXPECT_NE(Refusal("f'x'"), "");
  EXPECT_NE(Refusal(R"('\N{DASH}')"), "");
}

TEST(PyLiteralTest, ContainersAndConstants) {
  EXPECT_EQ(Parse("[1, [2, 3], ()]").items[1].items.size(), 2u);
  EXPECT_EQ(Parse("{1, 2}").kind, Kind::kSet);
  EXPECT_EQ(Parse("set()").kind, Kind::kSet);
  EXPECT_EQ(Parse("None").kind, Kind::kNone);
  EXPECT_EQ(Parse("...").kind, Kind::kEllipsis);
  EXPECT_TRUE(Parse("True").flag);
  EXPECT_EQ(Parse("(1,)").items.size(), 1u);
  EXPECT_EQ(Parse("{'a': 1,  # a comment\n 'b': 2}").items.size(), 4u);
  EXPECT_NE(Refusal("{[1]: 2}").find("unhashable dict key"), std::string::npos);
  EXPECT_NE(Refusal("{[1], 2}").find("unhashable set item"), std::string::npos);
  EXPECT_EQ(Refusal("{'a': 1"), "expected ',' or '}' but found end of the header");
  EXPECT_EQ(Parse("  {}").kind, Kind::kDict);  // literal_eval strips leading spaces and tabs
  EXPECT_EQ(Refusal("\n  {}"), "unexpected indent at byte 3");
  EXPECT_EQ(Refusal("{'a': x}"), "unexpected 'x' at byte 6 (a name other than True, False, None)");
  EXPECT_NE(Refusal(std::string("{'a'\0: 1}", 9)).find("a NUL byte"), std::string::npos);
  EXPECT_NE(Refusal("'\xff'").find("invalid UTF-8"), std::string::npos);
  EXPECT_EQ(Parse("'\xff'", PyHeaderText::kLatin1Python2).text, "\xc3\xbf");  // latin-1 ÿ as UTF-8
}

TEST(PyLiteralTest, NestingUpToTheLimitAndNoDeeper) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_EQ(Parse(nested(kMaxPyNesting)).kind, Kind::kList);
  EXPECT_NE(Refusal(nested(kMaxPyNesting + 1)).find("nesting deeper than 200 brackets"), std::string::npos);
}

// Random nestings of tuples and lists of small ints parse to the shape they
// were printed from (shape: a leaf -1 - value, a container 2·count + is_list).

std::string RandomLiteral(std::mt19937_64& rng, int depth, std::vector<int>* shape) {
  if (depth == 0 || rng() % 3 == 0) {
    const int n = static_cast<int>(rng() % 1000);
    shape->push_back(-1 - n);  // a leaf: -1 - value
    return std::to_string(n);
  }
  const int count = static_cast<int>(rng() % 4);
  const bool list = rng() % 2 == 0;
  shape->push_back(count * 2 + (list ? 1 : 0));
  std::string out = list ? "[" : "(";
  for (int k = 0; k < count; ++k) out += RandomLiteral(rng, depth - 1, shape) + ", ";
  return out + (list ? "]" : ")");
}

void Check(const PyLiteral& v, const std::vector<int>& shape, size_t* at) {
  const int s = shape[(*at)++];
  if (s < 0) {
    EXPECT_EQ(v.kind, Kind::kInt);
    EXPECT_EQ(v.magnitude, static_cast<uint64_t>(-1 - s));
    return;
  }
  EXPECT_EQ(v.kind, s % 2 ? Kind::kList : Kind::kTuple);
  ASSERT_EQ(v.items.size(), static_cast<size_t>(s / 2));
  for (const PyLiteral& item : v.items) Check(item, shape, at);
}

TEST(PyLiteralTest, RandomNestingsParseToTheirShape) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 200; ++k) {
    std::vector<int> shape;
    const std::string text = RandomLiteral(rng, 6, &shape);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + text);
    size_t at = 0;
    Check(Parse(text), shape, &at);
    EXPECT_EQ(at, shape.size());
  }
}

}  // namespace
}  // namespace momenta
