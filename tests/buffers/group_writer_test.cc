// GroupWriter (buffers/group_writer.h): submissions from many threads applied
// in groups, each wait answered with a sequence that covers its updates; a
// group closes when full without waiting out its delay; a bad update is
// refused to its submitter alone; a failed group (a full disk) fails its
// waiters and every later one, and nothing after it is applied.
#include "buffers/group_writer.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "storage/array/array_file.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

BufferedArrayOptions Options(bool writable = true) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.sync = LogSync::kBatch;
  return o;
}

void CreateArray(const std::string& path, uint64_t length) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {length};
  ASSERT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
}

std::unique_ptr<GroupWriter> StartWriter(const std::string& path, const GroupWriterOptions& options) {
  auto ba = BufferedArray::Open(path, Options());
  EXPECT_OK(ba);
  if (!ba.ok()) return nullptr;
  auto gw = GroupWriter::Start(std::move(ba).value(), options);
  EXPECT_OK(gw);
  return gw.ok() ? std::move(gw).value() : nullptr;
}

// The log's records: sequence of the record that set (index, value).
std::map<std::pair<uint64_t, double>, uint64_t> LogSequences(const std::string& array) {
  std::map<std::pair<uint64_t, double>, uint64_t> out;
  auto reader = LogReader::Open(LogDirPath(array));
  EXPECT_OK(reader);
  if (!reader.ok()) return out;
  LogRecord r;
  while (true) {
    auto more = (*reader)->Next(&r);
    EXPECT_OK(more);
    if (!more.ok() || !*more) break;
    double v;
    std::memcpy(&v, &r.new_raw, sizeof v);
    out[{r.index, v}] = r.sequence;
  }
  return out;
}

// Four threads, each writing its own elements one update at a time and
// waiting for each: every element ends with its last value, and the
// sequence each wait returned covers the record of that update.
TEST(GroupWriterTest, ThreadsSubmitAndEachWaitCoversItsUpdates) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  constexpr uint64_t kLength = 4000;
  CreateArray(path, kLength);
  auto gw = StartWriter(path, {.max_delay_ms = 2, .max_group = 1000});
  ASSERT_TRUE(gw);
  constexpr int kThreads = 4, kEach = 150;
  // (index, value) -> the sequence its wait returned.
  std::vector<std::vector<std::pair<std::pair<uint64_t, double>, uint64_t>>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kEach; ++k) {
        const uint64_t index = static_cast<uint64_t>(t) * 1000 + static_cast<uint64_t>(k % 50);
        const double value = t * 1e6 + k + 1;
        const IndexedValue u{index, Value::Float(value), 1000 + k};
        auto seq = gw->Write(std::span<const IndexedValue>(&u, 1));
        ASSERT_OK(seq);
        seen[t].push_back({{index, value}, *seq});
      }
    });
  for (auto& th : threads) th.join();
  const uint64_t groups = gw->groups();
  ASSERT_OK(gw->Close());
  EXPECT_GE(groups, 1u);
  EXPECT_LE(groups, static_cast<uint64_t>(kThreads * kEach));
  const auto sequences = LogSequences(path);
  ASSERT_EQ(sequences.size(), static_cast<size_t>(kThreads * kEach));
  for (int t = 0; t < kThreads; ++t)
    for (const auto& [update, returned] : seen[t]) {
      const auto it = sequences.find(update);
      ASSERT_NE(it, sequences.end()) << update.first << " " << update.second;
      EXPECT_LE(it->second, returned) << "a wait returned before its record's sequence";
    }
  // The array holds each element's last value, and a reader agrees.
  auto reader = BufferedArray::Open(path, Options(/*writable=*/false));
  ASSERT_OK(reader);
  double expected = 0;
  for (int t = 0; t < kThreads; ++t)
    for (int k = kEach - 50; k < kEach; ++k) expected += t * 1e6 + k + 1;
  auto s = (*reader)->Summarize(0, kLength, false);
  ASSERT_OK(s);
  const double sum = static_cast<double>(s->values.mean() * static_cast<long double>(s->values.count()));
  EXPECT_NEAR(sum, expected, 1e-9 * expected);  // Σ a_i
  EXPECT_EQ((*reader)->open_report().replayed, 0u) << "Close left records to replay";
}

// A group that reaches max_group closes at once, not after its delay.
TEST(GroupWriterTest, AFullGroupClosesWithoutWaitingOutItsDelay) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  CreateArray(path, 100);
  auto gw = StartWriter(path, {.max_delay_ms = 600000, .max_group = 3});
  ASSERT_TRUE(gw);
  uint64_t last = 0;
  for (uint64_t k = 0; k < 3; ++k) {
    const IndexedValue u{k, Value::Float(1.0 + k)};
    auto ticket = gw->Submit(std::span<const IndexedValue>(&u, 1));
    ASSERT_OK(ticket);
    last = *ticket;
  }
  auto waited = std::async(std::launch::async, [&] { return gw->WaitDurable(last); });
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the full group waited for its 10-minute delay";
  auto seq = waited.get();
  ASSERT_OK(seq);
  EXPECT_EQ(*seq, 3u);
  EXPECT_EQ(gw->groups(), 1u);
  ASSERT_OK(gw->Close());
}

TEST(GroupWriterTest, BadUpdatesAreRefusedToTheirSubmitterOnly) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  CreateArray(path, 10);
  auto gw = StartWriter(path, {.max_delay_ms = 1});
  ASSERT_TRUE(gw);
  const std::vector<IndexedValue> bad = {{1, Value::Float(1)}, {10, Value::Float(2)}};
  auto refused = gw->Submit(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kOutOfRange) << refused.status().ToString();
  EXPECT_NE(refused.status().ToString().find("update #1"), std::string::npos) << refused.status().ToString();
  const std::vector<IndexedValue> good = {{1, Value::Float(5)}};
  auto seq = gw->Write(good);
  ASSERT_OK(seq);
  EXPECT_EQ(*seq, 1u);  // the refused submission left nothing in the log
  ASSERT_OK(gw->Close());
  EXPECT_FALSE(gw->Submit(good).ok()) << "a closed writer took an update";
  ASSERT_OK(gw->Close());  // idempotent
}

TEST(GroupWriterTest, StartRefusesAReaderAndAnEmptyGroup) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  CreateArray(path, 10);
  auto reader = BufferedArray::Open(path, Options(/*writable=*/false));
  ASSERT_OK(reader);
  auto gw = GroupWriter::Start(std::move(reader).value());
  ASSERT_FALSE(gw.ok());
  EXPECT_NE(gw.status().ToString().find("writable"), std::string::npos) << gw.status().ToString();
  auto writer = BufferedArray::Open(path, Options());
  ASSERT_OK(writer);
  gw = GroupWriter::Start(std::move(writer).value(), {.max_group = 0});
  EXPECT_FALSE(gw.ok());
}

// On a full disk (a small tmpfs) the group that does not fit fails its
// waiter and every later one; the groups before it stay applied.
TEST(GroupWriterTest, AFailedGroupFailsItsWaitersAndStopsTheWriter) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  testing::TmpfsMount tmpfs(mnt, "2m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 2 MiB tmpfs (" << tmpfs.error() << ")";
  const std::string path = mnt + "/a.npy";
  CreateArray(path, 1 << 18);
  auto gw = StartWriter(path, {.max_delay_ms = 1});
  ASSERT_TRUE(gw);
  const std::vector<IndexedValue> small = {{3, Value::Float(7)}};
  ASSERT_OK(gw->Write(small));
  std::vector<IndexedValue> big;  // 8 MB of log frames do not fit in 2 MiB
  for (uint64_t k = 0; k < 200000; ++k) big.push_back({k % 1000, Value::Float(static_cast<double>(k + 9))});
  auto failed = gw->Write(big);
  ASSERT_FALSE(failed.ok()) << "2 MiB did not fill up";
  EXPECT_NE(failed.status().ToString().find("No space left on device"), std::string::npos)
      << failed.status().ToString();
  EXPECT_FALSE(gw->Write(small).ok()) << "the writer went on after a failed group";
  EXPECT_FALSE(gw->Close().ok());
}

}  // namespace
}  // namespace momenta
