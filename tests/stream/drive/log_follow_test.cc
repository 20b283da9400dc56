// stream/drive/log_follow.h without the CLI: a window following a log on the
// log's own clock reports what is logged, whenever it is read; started on a
// log, it reads only the records its window can hold and reports from the
// newest time on; and stream/drive/log_wait.h waits for a log to appear.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/log/log_writer.h"
#include "stream/drive/log_follow.h"
#include "stream/drive/log_wait.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

void Append(LogWriter& w, const std::vector<std::pair<int64_t, uint64_t>>& time_index) {
  std::vector<LogRecord> records;
  for (const auto& [time, index] : time_index) {
    LogRecord r;
    r.time = time;
    r.index = index;
    records.push_back(r);
  }
  ASSERT_OK(w.Append(records));
  ASSERT_OK(w.Commit());
}

class Reports {
 public:
  void Add(const Summarizer& s) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::to_string(s.now()) + ":" + std::to_string(static_cast<int>(s.Report(0, {}).count)));
  }
  std::vector<std::string> seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  // Waits until `n` reports are in (10 s at most).
  std::vector<std::string> WaitFor(size_t n) const {
    for (int i = 0; i < 1000 && seen().size() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return seen();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> seen_;
};

TEST(LogFollowDriverTest, ReportsWhatIsLoggedFromTheNewestTimeOn) {
  ScratchDir dir;
  const std::string log_dir = dir.File("a.npy.momenta/log");
  auto w = LogWriter::Open(log_dir, LogWriterOptions{});
  ASSERT_OK(w);
  // Older than the newest time - W: never read. Then one record at the newest time, 5000.
  Append(**w, {{1000, 1}, {1000, 2}, {1001, 3}});
  Append(**w, {{5000, 4}});
  std::atomic<int> stop_flag{0};
  std::vector<std::string> notices;
  auto log = LogSource::Open(log_dir, ItemMapping(), /*follow=*/true, StopToken(&stop_flag, -1), nullptr);
  ASSERT_OK(log);
  auto s = Summarizer::Create({/*window=*/100, /*tardiness=*/0}, 0.1);
  ASSERT_OK(s);
  Reports reports;
  Status run;
  std::thread follower([&] {
    run = RunLogClock(
        **log, *s, 0, [&](const Summarizer& s) { reports.Add(s); }, StopToken(&stop_flag, -1),
        [&](const std::string& n) { notices.push_back(n); });
  });
  EXPECT_EQ(reports.WaitFor(1), std::vector<std::string>{"5000:1"});
  // One more at 5000, then two at 5002 in one piece: 5000 is complete once 5002 comes, 5002 once read to the end.
  Append(**w, {{5000, 5}, {5002, 6}, {5002, 7}});
  EXPECT_EQ(reports.WaitFor(3), (std::vector<std::string>{"5000:1", "5000:2", "5002:4"}));
  // Time moves only with the log: 5150 expires everything up to 5050.
  Append(**w, {{5150, 8}});
  EXPECT_EQ(reports.WaitFor(4).back(), "5150:1");
  stop_flag = 1;
  follower.join();
  EXPECT_OK(run);
  EXPECT_EQ(reports.seen().size(), 4u);  // nothing changed since the last report
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("starting at time 4900"), std::string::npos) << notices[0];
}

TEST(LogFollowDriverTest, WaitForLogDirWaitsForTheArrayThenItsLog) {
  ScratchDir dir;
  const std::string array = dir.File("a.npy");
  std::atomic<int> stop_flag{0};
  std::vector<std::string> notices;
  Result<std::string> found = Status::NotFound("", "the waiter has not answered");
  std::thread waiter([&] {
    found = WaitForLogDir(
        array, "", StopToken(&stop_flag, -1), [&](const std::string& n) { notices.push_back(n); },
        /*poll_ms=*/5);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  testing::WriteFileBytes(array, "not yet an array");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_OK(LogWriter::Open(array + ".momenta/log", LogWriterOptions{}));
  waiter.join();
  ASSERT_OK(found);
  EXPECT_EQ(*found, array + ".momenta/log");
  ASSERT_EQ(notices.size(), 1u);  // said once, however long it waited
  EXPECT_NE(notices[0].find("no such file yet"), std::string::npos) << notices[0];

  // A stop while waiting: Interrupted.
  stop_flag = 1;
  auto stopped = WaitForLogDir(dir.File("never.npy"), "", StopToken(&stop_flag, -1), nullptr, 5);
  EXPECT_EQ(stopped.status().code(), Status::Code::kInterrupted) << stopped.status().ToString();
}

}  // namespace
}  // namespace momenta
