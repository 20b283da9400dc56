// The input of `momenta update` (tools/update_parse.h): fields split on any
// whitespace, comments and blank lines skipped, '\r' dropped, the last line
// without its newline, and each bad line named by number with what is wrong;
// binary records checked the same way.
#include "tools/update_parse.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/assert_ok.h"

namespace momenta::cli {
namespace {

Result<std::vector<IndexedValue>> Text(const std::string& text, uint64_t length = 100) {
  return ParseUpdates(text, /*binary=*/false, "in", DType::kI8, length, /*time=*/42);
}

TEST(UpdateParseTest, FieldsCommentsBlankLinesAndTimes) {
  auto u = Text("1 10\n\t2\t\t20   7 \r\n# a comment\n\n   \n3 30 # trailing\r\n4 -40");
  ASSERT_OK(u);
  ASSERT_EQ(u->size(), 4u);
  EXPECT_EQ((*u)[0].index, 1u);
  EXPECT_EQ((*u)[0].value.i, 10);
  EXPECT_EQ((*u)[0].time, 42);  // no TIME: the default
  EXPECT_EQ((*u)[1].index, 2u);
  EXPECT_EQ((*u)[1].time, 7);
  EXPECT_EQ((*u)[2].value.i, 30);
  EXPECT_EQ((*u)[3].index, 4u);  // the last line, without its newline
  EXPECT_EQ((*u)[3].value.i, -40);
  ASSERT_OK(Text(""));
  EXPECT_TRUE(Text("")->empty());
}

TEST(UpdateParseTest, BadLinesAreNamedByNumber) {
  auto expect = [](const std::string& text, Status::Code code, const std::string& message) {
    auto u = Text(text);
    ASSERT_FALSE(u.ok()) << text;
    EXPECT_EQ(u.status().code(), code) << u.status().ToString();
    EXPECT_NE(u.status().ToString().find(message), std::string::npos) << u.status().ToString();
  };
  expect("1 1\n2\n", Status::Code::kInvalidArgument, "in: line 2: expected 'INDEX VALUE [TIME]'");
  expect("1 1 5 6\n", Status::Code::kInvalidArgument, "line 1: expected 'INDEX VALUE [TIME]'");
  expect("x 1\n", Status::Code::kInvalidArgument, "line 1: 'x' is not an index");
  expect("-1 1\n", Status::Code::kInvalidArgument, "line 1: '-1' is not an index");
  expect("1 1 noon\n", Status::Code::kInvalidArgument, "line 1: 'noon' is not a time in ms");
  expect("\n\n1 1.5\n", Status::Code::kInvalidArgument, "line 3: ");  // 1.5 does not fit i8
  expect("100 1\n", Status::Code::kOutOfRange, "line 1: index 100 is outside the array (length 100)");
}

TEST(UpdateParseTest, BinaryRecords) {
  std::string bytes(32, '\0');
  const uint64_t i0 = 3, i1 = 100;
  const double v = 5;
  std::memcpy(bytes.data(), &i0, 8);
  std::memcpy(bytes.data() + 8, &v, 8);
  std::memcpy(bytes.data() + 16, &i0, 8);
  std::memcpy(bytes.data() + 24, &v, 8);
  auto u = ParseUpdates(bytes, /*binary=*/true, "in", DType::kF8, 100, 42);
  ASSERT_OK(u);
  ASSERT_EQ(u->size(), 2u);
  EXPECT_EQ((*u)[1].index, 3u);
  EXPECT_EQ((*u)[1].value.f, 5.0);
  std::memcpy(bytes.data() + 16, &i1, 8);
  u = ParseUpdates(bytes, /*binary=*/true, "in", DType::kF8, 100, 42);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().ToString().find("record 1: index 100 is outside the array"), std::string::npos)
      << u.status().ToString();
  u = ParseUpdates(bytes.substr(0, 20), /*binary=*/true, "in", DType::kF8, 100, 42);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().ToString().find("size 20 is not a multiple of 16"), std::string::npos) << u.status().ToString();
}

}  // namespace
}  // namespace momenta::cli
