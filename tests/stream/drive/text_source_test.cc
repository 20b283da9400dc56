// stream/drive/text_source.h without the CLI: what each OneWord rule makes of
// a line of one word, and errors naming the line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stream/drive/text_source.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;
using testing::WriteFileBytes;

std::unique_ptr<TextSource> Open(const ScratchDir& dir, const std::string& text, OneWord one_word) {
  WriteFileBytes(dir.File("in.txt"), text);
  auto source = TextSource::Open(dir.File("in.txt"), ItemMapping(), one_word, StopToken());
  EXPECT_OK(source);
  return source.ok() ? std::move(*source) : nullptr;
}

TEST(TextSourceTest, OneWordRules) {
  ScratchDir dir;
  TimedItem x;
  auto ticks = Open(dir, "5 7\n\n9\r\n", OneWord::kTimestamp);
  ASSERT_OK(ticks->Next(&x, std::chrono::milliseconds(-1)));
  EXPECT_TRUE(x.ts == 5 && x.item == 7 && x.has_item);
  auto got = ticks->Next(&x, std::chrono::milliseconds(-1));
  ASSERT_OK(got);
  EXPECT_TRUE(*got == ItemSource::Got::kItem && x.ts == 9 && !x.has_item);
  auto end = ticks->Next(&x, std::chrono::milliseconds(-1));
  ASSERT_OK(end);
  EXPECT_EQ(*end, ItemSource::Got::kEnd);

  auto refused = Open(dir, "9\n", OneWord::kRefused);
  EXPECT_EQ(refused->Next(&x, std::chrono::milliseconds(-1)).status().ToString(),
            "Invalid argument: " + dir.File("in.txt") + ":1: expected 'TIMESTAMP ITEM'");
  // kItemNow takes the word only with nothing after it; kItemNowTrimmed drops the CR.
  auto strict = Open(dir, "4\r\n", OneWord::kItemNow);
  EXPECT_FALSE(strict->Next(&x, std::chrono::milliseconds(0)).ok());
  auto trimmed = Open(dir, "4\r\n", OneWord::kItemNowTrimmed);
  ASSERT_OK(trimmed->Next(&x, std::chrono::milliseconds(0)));
  EXPECT_TRUE(x.item == 4 && x.has_item && x.ts > 0);
}

TEST(TextSourceTest, CommentLinesAreSkippedAndCountInLineNumbers) {
  ScratchDir dir;
  TimedItem x;
  auto in = Open(dir, "# TIMESTAMP ITEM\n5 7\n  # indented comment\n\n6 8\n7 x\n", OneWord::kRefused);
  ASSERT_OK(in->Next(&x, std::chrono::milliseconds(-1)));
  EXPECT_TRUE(x.ts == 5 && x.item == 7);
  ASSERT_OK(in->Next(&x, std::chrono::milliseconds(-1)));
  EXPECT_TRUE(x.ts == 6 && x.item == 8);
  const auto bad = in->Next(&x, std::chrono::milliseconds(-1));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("in.txt:6:"), std::string::npos) << bad.status().ToString();
}

}  // namespace
}  // namespace momenta
