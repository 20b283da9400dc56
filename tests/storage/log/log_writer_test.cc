// LogWriter + LogReader round trips: across rotation, sequence continuity
// after reopen, each sync policy's syncs (counted through the fault seam),
// timestamps, filters, multi-frame appends, dropping segments, dtype checks.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "storage/log/log_codec.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

// The value of an OK result; a failed expectation and T{} otherwise.
template <typename T>
T Get(Result<T> r) {
  EXPECT_OK(r);
  return r.ok() ? std::move(r).value() : T{};
}

LogWriterOptions Options(LogSync sync = LogSync::kBatch, uint64_t segment_bytes = 64 << 20) {
  LogWriterOptions o;
  o.dtype = DType::kF8;
  o.sync = sync;
  o.segment_bytes = segment_bytes;
  return o;
}

std::unique_ptr<LogWriter> MustOpen(const std::string& dir, LogWriterOptions o) {
  auto w = LogWriter::Open(dir, std::move(o));
  EXPECT_OK(w);
  return w.ok() ? std::move(*w) : nullptr;
}

// Records with index i, old value i, new value i + 0.5 (f8), time t0 + i.
std::vector<LogRecord> Records(uint64_t first_index, size_t n, int64_t t0 = 1000) {
  std::vector<LogRecord> out(n);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t i = first_index + k;
    out[k].index = i;
    out[k].time = t0 + static_cast<int64_t>(i);
    out[k].old_raw = LogRawFromValue(DType::kF8, Value::Float(static_cast<double>(i)));
    out[k].new_raw = LogRawFromValue(DType::kF8, Value::Float(static_cast<double>(i) + 0.5));
  }
  return out;
}

struct ReadResult {
  std::vector<LogRecord> records;
  std::vector<LogDamage> damage;
};

ReadResult ReadAll(const std::string& dir, LogReaderOptions options = {}) {
  ReadResult r;
  auto reader = LogReader::Open(dir, options);
  EXPECT_OK(reader);
  if (!reader.ok()) return r;
  LogRecord rec;
  for (;;) {
    auto got = (*reader)->Next(&rec);
    EXPECT_OK(got);
    if (!got.ok() || !*got) break;
    r.records.push_back(rec);
  }
  r.damage = (*reader)->damage();
  return r;
}

// Sequences [first, first + n) with the fields Records() gives index first_index...
void ExpectRecords(const std::vector<LogRecord>& got, uint64_t first_sequence, uint64_t first_index, size_t n) {
  ASSERT_EQ(got.size(), n);
  const auto want = Records(first_index, n);
  for (size_t k = 0; k < n; ++k) {
    ASSERT_EQ(got[k].sequence, first_sequence + k) << "#" << k;
    ASSERT_EQ(got[k].index, want[k].index) << "#" << k;
    ASSERT_EQ(got[k].time, want[k].time) << "#" << k;
    ASSERT_EQ(got[k].old_raw, want[k].old_raw) << "#" << k;
    ASSERT_EQ(got[k].new_raw, want[k].new_raw) << "#" << k;
  }
}

TEST(LogWriterTest, RoundTripAcrossRotation) {
  ScratchDir dir;
  const std::string log = dir.File("a.npy.momenta/log");
  // 4 KiB segments: 64-byte header + frames of 1 to 20 records (56 to 816 bytes).
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto w = MustOpen(log, Options(LogSync::kBatch, 4096));
  ASSERT_TRUE(w);
  uint64_t total = 0;
  while (total < 2000) {
    const size_t n = 1 + rng() % 20;
    auto first = w->Append(Records(total, n));
    ASSERT_OK(first);
    ASSERT_EQ(*first, total + 1);
    total += n;
  }
  ASSERT_OK(w->Commit());
  auto segments = ListLogSegments(log);
  ASSERT_OK(segments);
  EXPECT_GT(segments->size(), 10u);
  uint64_t expect_first = 1;
  for (const auto& s : *segments) {
    // Named by their first sequence; none past the limit unless it holds one frame.
    EXPECT_GE(s.first_sequence, expect_first);
    expect_first = s.first_sequence + 1;
    struct stat st;
    ASSERT_EQ(::stat(s.path.c_str(), &st), 0);
    EXPECT_LE(st.st_size, 4096);
  }
  const ReadResult r = ReadAll(log);
  EXPECT_TRUE(r.damage.empty()) << r.damage.front().ToString();
  ExpectRecords(r.records, 1, 0, total);
}

TEST(LogWriterTest, SequenceContinuesAfterReopen) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  uint64_t total = 0;
  for (int round = 0; round < 5; ++round) {
    auto w = MustOpen(log, Options(LogSync::kBatch, 1024));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->next_sequence(), total + 1);
    EXPECT_TRUE(w->recovery().damage.empty());
    for (int k = 0; k < 7; ++k) {
      auto first = w->Append(Records(total, 3));
      ASSERT_OK(first);
      EXPECT_EQ(*first, total + 1);
      total += 3;
    }
    if (round % 2 == 0) {
      ASSERT_OK(w->Close());
    }  // else: dropped without Close (a process exit)
  }
  ExpectRecords(ReadAll(log).records, 1, 0, total);
}

TEST(LogWriterTest, FirstSequenceOfAnEmptyLog) {
  ScratchDir dir;
  LogWriterOptions o = Options();
  o.first_sequence = 1000;
  auto w = MustOpen(dir.File("log"), o);
  ASSERT_TRUE(w);
  EXPECT_EQ(Get(w->Append(Records(0, 2))), 1000u);
  w.reset();
  EXPECT_TRUE(std::filesystem::exists(dir.File("log/" + LogSegmentName(1000))));
  o.first_sequence = 5;  // ignored once the log holds records
  w = MustOpen(dir.File("log"), o);
  EXPECT_EQ(w->next_sequence(), 1002u);
  o.first_sequence = 0;
  EXPECT_EQ(LogWriter::Open(dir.File("log2"), o).status().code(), Status::Code::kInvalidArgument);
}

TEST(LogWriterTest, EachSyncPolicySyncsWhenItPromises) {
  for (LogSync sync : {LogSync::kAlways, LogSync::kBatch, LogSync::kNone}) {
    SCOPED_TRACE(std::string(LogSyncName(sync)));
    ScratchDir dir;
    int syncs = 0;
    LogWriterOptions o = Options(sync, 2048);
    o.fault = [&](LogFileOp op, const std::string&) {
      if (op == LogFileOp::kSync) ++syncs;
      return Status::OK();
    };
    auto w = MustOpen(dir.File("log"), o);
    ASSERT_TRUE(w);
    ASSERT_OK(w->Append(Records(0, 1)));
    ASSERT_OK(w->Append(Records(1, 2)));
    EXPECT_EQ(syncs, sync == LogSync::kAlways ? 2 : 0);
    ASSERT_OK(w->Commit());
    EXPECT_EQ(syncs, sync == LogSync::kAlways ? 2 : sync == LogSync::kBatch ? 1 : 0);
    ASSERT_OK(w->Commit());  // nothing new: no second sync
    EXPECT_EQ(syncs, sync == LogSync::kAlways ? 2 : sync == LogSync::kBatch ? 1 : 0);
    // Rotation (20 records = 816 bytes a frame, 2048-byte segments): kBatch
    // syncs the segment it leaves, so one Commit covers the new one only.
    syncs = 0;
    for (int k = 0; k < 6; ++k) ASSERT_OK(w->Append(Records(3 + 20 * k, 20)));
    const int rotations = 2;  // 3 segments for 2 + 2 + 2 frames
    EXPECT_EQ(syncs, sync == LogSync::kAlways ? 6 : sync == LogSync::kBatch ? rotations : 0);
    ASSERT_OK(w->Close());
    const ReadResult r = ReadAll(dir.File("log"));
    EXPECT_TRUE(r.damage.empty());
    ExpectRecords(r.records, 1, 0, 123);
  }
}

TEST(LogWriterTest, FirstCommitAfterReopenSyncsWhatAnEarlierWriterLeft) {
  // An earlier writer under kNone (or one that died before Commit) may have
  // left the segment and its folder entry unsynced.
  ScratchDir dir;
  {
    auto w = MustOpen(dir.File("log"), Options(LogSync::kNone));
    ASSERT_OK(w->Append(Records(0, 3)));
  }
  int syncs = 0;
  LogWriterOptions o = Options(LogSync::kBatch);
  o.fault = [&](LogFileOp op, const std::string&) {
    if (op == LogFileOp::kSync) ++syncs;
    return Status::OK();
  };
  auto w = MustOpen(dir.File("log"), o);
  ASSERT_OK(w->Commit());
  EXPECT_EQ(syncs, 1);
  ASSERT_OK(w->Commit());
  EXPECT_EQ(syncs, 1);
}

TEST(LogWriterTest, ParseSyncPolicy) {
  EXPECT_EQ(Get(ParseLogSync("always", "--sync")), LogSync::kAlways);
  EXPECT_EQ(Get(ParseLogSync("batch", "--sync")), LogSync::kBatch);
  EXPECT_EQ(Get(ParseLogSync("none", "--sync")), LogSync::kNone);
  EXPECT_EQ(ParseLogSync("sometimes", "--sync").status().ToString(),
            "Invalid argument: --sync: 'sometimes' is not one of always, batch, none");
}

TEST(LogWriterTest, TimestampsDefaultToTheWallClock) {
  ScratchDir dir;
  auto w = MustOpen(dir.File("log"), Options());
  std::vector<LogRecord> recs(2);
  recs[0].index = 1;  // time kLogTimeNow
  recs[1].index = 2;
  recs[1].time = -42;  // the caller's own clock
  const int64_t before =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  ASSERT_OK(w->Append(recs));
  const int64_t after =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const ReadResult r = ReadAll(dir.File("log"));
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_GE(r.records[0].time, before);
  EXPECT_LE(r.records[0].time, after);
  EXPECT_EQ(r.records[1].time, -42);
}

TEST(LogWriterTest, ReaderFiltersBySequenceAndTime) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  auto w = MustOpen(log, Options(LogSync::kNone, 1024));
  for (int k = 0; k < 50; ++k) ASSERT_OK(w->Append(Records(10 * k, 10)));  // times 1000..1499
  LogReaderOptions o;
  o.from_sequence = 123;
  ExpectRecords(ReadAll(log, o).records, 123, 122, 378);
  o = {};
  o.since = 1200;
  o.until = 1300;  // half-open
  ExpectRecords(ReadAll(log, o).records, 201, 200, 100);
  o.from_sequence = 250;
  ExpectRecords(ReadAll(log, o).records, 250, 249, 51);
  o = {};
  o.from_sequence = 501;
  EXPECT_TRUE(ReadAll(log, o).records.empty());
}

TEST(LogWriterTest, BatchesBeyondOneFrameAndEmptyAppends) {
  ScratchDir dir;
  auto w = MustOpen(dir.File("log"), Options());
  EXPECT_EQ(Get(w->Append({})), 1u);
  const size_t n = kMaxFrameRecords * 2 + 5;
  ASSERT_EQ(Get(w->Append(Records(0, n))), 1u);
  EXPECT_EQ(w->next_sequence(), n + 1);
  ASSERT_OK(w->Close());
  EXPECT_FALSE(w->Append(Records(0, 1)).ok());  // closed
  const ReadResult r = ReadAll(dir.File("log"));
  EXPECT_TRUE(r.damage.empty());
  ExpectRecords(r.records, 1, 0, n);
}

TEST(LogWriterTest, DropSegmentsBefore) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  auto w = MustOpen(log, Options(LogSync::kBatch, 1024));
  for (int k = 0; k < 30; ++k) ASSERT_OK(w->Append(Records(5 * k, 5)));  // 150 records
  auto before = ListLogSegments(log);
  ASSERT_GE(before->size(), 5u);
  EXPECT_EQ(Get(w->DropSegmentsBefore(0)), 0u);
  // Keep every record >= the first of segment 3: segments 0..2 go.
  const uint64_t keep_from = (*before)[3].first_sequence;
  EXPECT_EQ(Get(w->DropSegmentsBefore(keep_from + 1)), 3u);
  auto after = ListLogSegments(log);
  ASSERT_EQ(after->size(), before->size() - 3);
  EXPECT_EQ(after->front().first_sequence, keep_from);
  ExpectRecords(ReadAll(log).records, keep_from, keep_from - 1, 151 - keep_from);
  // Never the newest segment, whatever the caller asks.
  EXPECT_EQ(Get(w->DropSegmentsBefore(UINT64_MAX)), after->size() - 1);
  auto last = ListLogSegments(log);
  ASSERT_EQ(last->size(), 1u);
  ASSERT_OK(w->Append(Records(150, 1)));
  w.reset();
  w = MustOpen(log, Options(LogSync::kBatch, 1024));
  EXPECT_EQ(w->next_sequence(), 152u);
}

TEST(LogWriterTest, AnotherDTypeIsRefused) {
  ScratchDir dir;
  auto w = MustOpen(dir.File("log"), Options());
  ASSERT_OK(w->Append(Records(0, 1)));
  w.reset();
  LogWriterOptions o = Options();
  o.dtype = DType::kI4;
  EXPECT_EQ(LogWriter::Open(dir.File("log"), o).status().ToString(),
            "Invalid argument: " + dir.File("log") + ": the log holds dtype f8, not i4");
}

TEST(LogWriterTest, ValuesKeepTheirDTypeBytes) {
  ScratchDir dir;
  LogWriterOptions o = Options();
  o.dtype = DType::kI2;
  o.array_tag = 0xABCDEF;
  auto w = MustOpen(dir.File("log"), o);
  LogRecord r;
  r.index = 9;
  r.old_raw = LogRawFromValue(DType::kI2, Value::Int(-2));
  r.new_raw = LogRawFromValue(DType::kI2, Value::Int(32767));
  EXPECT_EQ(r.old_raw, 0xFFFEu);  // little-endian bytes, zero-padded
  ASSERT_OK(w->Append({&r, 1}));
  auto reader = LogReader::Open(dir.File("log"));
  LogRecord got;
  ASSERT_TRUE(Get((*reader)->Next(&got)));
  EXPECT_EQ((*reader)->dtype(), DType::kI2);
  EXPECT_EQ((*reader)->array_tag(), 0xABCDEFu);
  EXPECT_EQ(LogValueFromRaw(DType::kI2, got.old_raw).i, -2);
  EXPECT_EQ(LogValueFromRaw(DType::kI2, got.new_raw).i, 32767);
}

TEST(LogWriterTest, ReadingAMissingLogIsNotFound) {
  ScratchDir dir;
  auto r = LogReader::Open(dir.File("nothing"));
  EXPECT_EQ(r.status().ToString(), "Not found: " + dir.File("nothing") + ": no update log here");
}

}  // namespace
}  // namespace momenta
