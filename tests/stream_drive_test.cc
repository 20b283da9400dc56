// stream/drive/ without the CLI: what each OneWord rule makes of a line of one
// word, errors naming the line, and the data clock's reports at each tick and
// at each multiple of --every, as an embedding program sees them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stream/drive/text_source.h"
#include "stream/drive/window_driver.h"
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

std::vector<std::string> DataClockReports(const std::string& text, int64_t every) {
  ScratchDir dir;
  auto source = Open(dir, text, OneWord::kRefused);
  auto s = Summarizer::Create({/*window=*/5, /*tardiness=*/0}, 0.1);
  EXPECT_OK(s);
  std::vector<std::string> reports;
  const ReportFn report = [&](const Summarizer& s) {
    reports.push_back(std::to_string(s.now()) + ":" + std::to_string(static_cast<int>(s.Report(1, {}).count)));
  };
  EXPECT_OK(RunDataClock(*source, *s, every, report, StopToken()));
  return reports;
}

TEST(WindowDriverTest, DataClockReportsEachTickAndEachMultiple) {
  // As WindowCliTest.ReportsEachTickFromStdin: a tick once a later item comes, and the end.
  EXPECT_EQ(DataClockReports("1 5\n1 5\n2 7\n3 5\n3 9\n10 5\n", 0),
            (std::vector<std::string>{"1:2", "2:3", "3:5", "10:1"}));
  // every 4: times 4 and 8 (nothing new since 3; 1 and 2 have left), then the last multiple, 12.
  EXPECT_EQ(DataClockReports("1 5\n2 7\n3 5\n10 5\n12 1\n", 4),
            (std::vector<std::string>{"4:3", "8:0", "12:2"}));
  EXPECT_TRUE(DataClockReports("", 0).empty());
}

}  // namespace
}  // namespace momenta
