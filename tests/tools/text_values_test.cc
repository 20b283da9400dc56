// The text/CSV import reader (tools/text_values.h): tokens and their lines,
// and the table reader over them (tools/text_table.h). The fuzz target `text`
// checks both against a reference split on arbitrary bytes; these are the
// cases it found.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/assert_ok.h"
#include "tools/text_table.h"
#include "tools/text_values.h"

namespace momenta {
namespace {

std::vector<std::pair<std::string, uint64_t>> Tokens(std::string_view text) {
  std::vector<std::pair<std::string, uint64_t>> out;
  Status st = cli::ForEachTextValue(text, "in.csv", [&](std::string_view tok, uint64_t line) {
    out.emplace_back(std::string(tok), line);
    return Status::OK();
  });
  EXPECT_OK(st);
  return out;
}

TEST(TextValuesTest, SeparatorsCommentsAndLines) {
  const auto t = Tokens("1.5,2;3\t4 5\r\n# all of this\n6#7\n\n,8");
  const std::vector<std::pair<std::string, uint64_t>> want = {{"1.5", 1}, {"2", 1}, {"3", 1}, {"4", 1},
                                                              {"5", 1},   {"6", 3}, {"8", 5}};
  EXPECT_EQ(t, want);
}

// A NUL byte used to end a token without being skipped (strchr finds the
// terminator): an empty token, and a reader that never moved past it.
TEST(TextValuesTest, NulByteIsPartOfItsTokenNotAnEmptyOne) {
  const std::string text("1,\0\0x,2\0", 8);
  const auto t = Tokens(text);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].first, "1");
  EXPECT_EQ(t[1].first, std::string("\0\0x", 3));
  EXPECT_EQ(t[2].first, std::string("2\0", 2));
  for (const auto& [tok, line] : t) EXPECT_FALSE(tok.empty());
  auto table = cli::ScanTextTable(text, DType::kF8, "in.csv", {});
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().ToString().find("in.csv: line 1: "), std::string::npos) << table.status().ToString();
}

// The table layer (tools/text_table.h): rows, header detection, --column.
TEST(TextValuesTableTest, RowsHeaderAndColumn) {
  const std::string text = "# made by hand\nt; v\n0;1.5\n\n1;2.5 # late\n";
  auto t = cli::ScanTextTable(text, DType::kF8, "in.csv", {});
  ASSERT_OK(t);
  EXPECT_EQ(t->rows, 2u);
  EXPECT_EQ(t->columns, 2u);
  EXPECT_TRUE(t->header_detected);
  EXPECT_EQ(t->header_line, 2u);
  EXPECT_EQ(t->names, (std::vector<std::string>{"t", "v"}));
  EXPECT_EQ(t->Shape(), (std::vector<uint64_t>{2, 2}));
  std::vector<std::pair<std::string, uint64_t>> got;
  ASSERT_OK(cli::ForEachTableValue(text, *t, "in.csv", [&](std::string_view tok, uint64_t line) {
    got.emplace_back(std::string(tok), line);
    return Status::OK();
  }));
  const std::vector<std::pair<std::string, uint64_t>> want = {{"0", 3}, {"1.5", 3}, {"1", 5}, {"2.5", 5}};
  EXPECT_EQ(got, want);
  cli::TextTableOptions pick;
  pick.column = "v";
  auto v = cli::ScanTextTable(text, DType::kF8, "in.csv", pick);
  ASSERT_OK(v);
  EXPECT_EQ(v->pick, std::optional<uint64_t>(1));
  EXPECT_EQ(v->Shape(), (std::vector<uint64_t>{2}));
}

// A row's values are the tokens ForEachTextValue reads on its line: every
// separator, a comment cutting a token, blank lines and a '\r' before '\n'.
TEST(TextValuesTableTest, RowValuesAreTheLinesTokens) {
  const std::string text = "1.5,2;3\t4\r\n5  6,,7 8#9\n\n9;10 11\t12 # c\n";
  auto t = cli::ScanTextTable(text, DType::kF8, "in.csv", {});
  ASSERT_OK(t);
  EXPECT_EQ(t->rows, 3u);
  EXPECT_EQ(t->columns, 4u);
  std::vector<std::pair<std::string, uint64_t>> got;
  ASSERT_OK(cli::ForEachTableValue(text, *t, "in.csv", [&](std::string_view tok, uint64_t line) {
    got.emplace_back(std::string(tok), line);
    return Status::OK();
  }));
  EXPECT_EQ(got, Tokens(text));
}

TEST(TextValuesTableTest, HeaderNamesAndShapes) {
  EXPECT_EQ(cli::SplitHeader("time (s),\"value\"\r"), (std::vector<std::string>{"time (s)", "value"}));
  EXPECT_EQ(cli::SplitHeader("  a  b # c"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(cli::SplitHeader("a,,b"), (std::vector<std::string>{"a", "", "b"}));
  auto empty = cli::ScanTextTable("# nothing\n\n", DType::kF8, "in.csv", {});
  ASSERT_OK(empty);
  EXPECT_EQ(empty->Shape(), (std::vector<uint64_t>{0}));
  auto one = cli::ScanTextTable("1 2 3\n", DType::kI4, "in.csv", {});
  ASSERT_OK(one);
  EXPECT_EQ(one->Shape(), (std::vector<uint64_t>{3}));  // numpy.loadtxt's squeeze of one row
  // A mixed first line is no header: its word is a bad value.
  auto mixed = cli::ScanTextTable("a,1\n2,3\n", DType::kF8, "in.csv", {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().ToString().find("in.csv: line 1: "), std::string::npos) << mixed.status().ToString();
}

}  // namespace
}  // namespace momenta
