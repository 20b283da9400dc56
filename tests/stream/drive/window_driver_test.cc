// stream/drive/window_driver.h: the data clock's reports at each tick and at
// each multiple of --every, as an embedding program sees them (a text source
// and a Summarizer, no CLI).
#include <gtest/gtest.h>

#include <cstdint>
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

std::vector<std::string> DataClockReports(const std::string& text, int64_t every) {
  ScratchDir dir;
  WriteFileBytes(dir.File("in.txt"), text);
  auto source = TextSource::Open(dir.File("in.txt"), ItemMapping(), OneWord::kRefused, StopToken());
  EXPECT_OK(source);
  if (!source.ok()) return {};
  auto s = Summarizer::Create({/*window=*/5, /*tardiness=*/0}, 0.1);
  EXPECT_OK(s);
  std::vector<std::string> reports;
  const ReportFn report = [&](const Summarizer& s) {
    reports.push_back(std::to_string(s.now()) + ":" + std::to_string(static_cast<int>(s.Report(1, {}).count)));
  };
  EXPECT_OK(RunDataClock(**source, *s, every, report, StopToken()));
  return reports;
}

TEST(WindowDriverTest, DataClockReportsEachTickAndEachMultiple) {
  // As WindowCommandTest.ReportsEachTickFromStdin: a tick once a later item comes, and the end.
  EXPECT_EQ(DataClockReports("1 5\n1 5\n2 7\n3 5\n3 9\n10 5\n", 0),
            (std::vector<std::string>{"1:2", "2:3", "3:5", "10:1"}));
  // every 4: times 4 and 8 (nothing new since 3; 1 and 2 have left), then the last multiple, 12.
  EXPECT_EQ(DataClockReports("1 5\n2 7\n3 5\n10 5\n12 1\n", 4), (std::vector<std::string>{"4:3", "8:0", "12:2"}));
  EXPECT_TRUE(DataClockReports("", 0).empty());
}

}  // namespace
}  // namespace momenta
