// Lost records and sequence numbers: a segment removed or cut anywhere in the
// log (not only a torn tail) is reported by readers and by the writer's
// recovery with the exact sequence range lost, and a sequence number that a
// record carried (and a reader may have consumed) is never handed out again —
// the high-water mark outside the segments remembers it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/log/log_mark.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_scan.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "storage/util/crc32c.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::ScratchDir;
using testing::WriteFileBytes;
using Kind = LogDamage::Kind;

constexpr uint64_t kHeader = sizeof(LogSegmentHeader);

LogWriterOptions Options(uint64_t segment_bytes = 64 << 20) {
  LogWriterOptions o;
  o.dtype = DType::kI8;
  o.segment_bytes = segment_bytes;
  o.sync = LogSync::kBatch;
  return o;
}

std::vector<LogRecord> Recs(uint64_t n) {
  std::vector<LogRecord> out(n);
  for (uint64_t k = 0; k < n; ++k) {
    out[k].index = k;
    out[k].time = 5;
  }
  return out;
}

// n one-record frames, committed and closed; segments of `per_segment` frames.
void WriteCommitted(const std::string& log, uint64_t n, uint64_t per_segment = 1000) {
  auto w = LogWriter::Open(log, Options(kHeader + per_segment * 56));
  ASSERT_OK(w);
  for (uint64_t k = 0; k < n; ++k) ASSERT_OK((*w)->Append(Recs(1)));
  ASSERT_OK((*w)->Close());
}

struct ReadResult {
  std::vector<uint64_t> sequences;
  std::vector<LogDamage> damage;
};

ReadResult ReadAll(const std::string& log) {
  ReadResult r;
  auto reader = LogReader::Open(log);
  EXPECT_OK(reader);
  if (!reader.ok()) return r;
  LogRecord rec;
  for (;;) {
    auto got = (*reader)->Next(&rec);
    EXPECT_OK(got);
    if (!got.ok() || !*got) break;
    r.sequences.push_back(rec.sequence);
  }
  r.damage = (*reader)->damage();
  return r;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> v;
  for (uint64_t s = first; s <= last; ++s) v.push_back(s);
  return v;
}

std::vector<uint64_t> Join(std::vector<uint64_t> a, const std::vector<uint64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string Segment(const std::string& log, uint64_t first) { return log + "/" + LogSegmentName(first); }

// Opens a writer (recovery), appends one record, closes; returns the recovery
// report and the sequence the record got.
LogRecovery RecoverAndAppend(const std::string& log, uint64_t* got, LogWriterOptions o = Options()) {
  auto w = LogWriter::Open(log, o);
  EXPECT_OK(w);
  if (!w.ok()) return {};
  LogRecovery rec = (*w)->recovery();
  auto first = (*w)->Append(Recs(1));
  EXPECT_OK(first);
  *got = first.ok() ? *first : 0;
  EXPECT_OK((*w)->Close());
  return rec;
}

TEST(LogLossTest, MissingNewestSegmentIsReportedAndItsSequencesAreNotReused) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 12, 4);  // segments 1, 5, 9
  ASSERT_EQ(ListLogSegments(log)->size(), 3u);
  ASSERT_EQ(::unlink(Segment(log, 9).c_str()), 0);

  ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 8));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kMissingEnd);
  EXPECT_EQ(r.damage[0].ToString(),
            Segment(log, 5) +
                ": records missing at the end of the log (the log ends at sequence 8, but the "
                "high-water mark says sequence 12 was logged); 4 records lost (sequences 9..12)");

  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kMissingEnd);
  EXPECT_EQ(rec.damage[0].first_lost, 9u);
  EXPECT_EQ(rec.damage[0].records_lost.value_or(0), 4u);
  EXPECT_EQ(got, 13u) << "sequence numbers 9..12 were given to records already";

  // Readers now see the hole between 8 and 13.
  r = ReadAll(log);
  EXPECT_EQ(r.sequences, Join(Range(1, 8), {13}));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kMissingRecords);
  EXPECT_EQ(r.damage[0].first_lost, 9u);
  EXPECT_EQ(r.damage[0].records_lost.value_or(0), 4u);
}

TEST(LogLossTest, NewestSegmentCutAtAFrameBoundary) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 6);
  const std::string path = Segment(log, 1);
  WriteFileBytes(path, ReadFileBytes(path).substr(0, kHeader + 4 * 56));  // records 5, 6 gone

  ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 4));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kMissingEnd);
  EXPECT_EQ(r.damage[0].first_lost, 5u);
  EXPECT_EQ(r.damage[0].records_lost.value_or(0), 2u);

  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].ToString(),
            path +
                ": records missing at the end of the log (the log ends at sequence 4, but the "
                "high-water mark says sequence 6 was logged); 2 records lost (sequences 5..6)");
  EXPECT_EQ(got, 7u);
}

TEST(LogLossTest, NewestSegmentCutMidFrameCarriesTheCommittedLoss) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 6);
  const std::string path = Segment(log, 1);
  WriteFileBytes(path, ReadFileBytes(path).substr(0, kHeader + 4 * 56 + 30));  // 5 torn, 6 gone
  ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 4));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kTornTail);
  EXPECT_EQ(r.damage[0].first_lost, 5u);
  EXPECT_EQ(r.damage[0].records_lost.value_or(0), 2u);
  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_TRUE(rec.damage[0].cut);
  EXPECT_NE(rec.damage[0].ToString().find("cut"), std::string::npos);
  EXPECT_TRUE(rec.damage[0].ToString().ends_with("; 2 records lost (sequences 5..6)")) << rec.damage[0].ToString();
  EXPECT_EQ(got, 7u);
}

TEST(LogLossTest, MiddleSegmentCutAtAFrameBoundaryIsAGap) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 12, 4);  // segments 1, 5, 9
  const std::string middle = Segment(log, 5);
  WriteFileBytes(middle, ReadFileBytes(middle).substr(0, kHeader + 56));  // keeps record 5 only

  ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Join(Range(1, 5), Range(9, 12)));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kMissingRecords);
  EXPECT_EQ(r.damage[0].first_lost, 6u);
  EXPECT_EQ(r.damage[0].records_lost.value_or(0), 3u);

  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].ToString(), Segment(log, 9) +
                                          ": records missing before offset 64; 3 records lost "
                                          "(sequences 6..8)");
  EXPECT_EQ(got, 13u);
  // A middle segment cut mid-frame: the writer scans it and settles the loss.
  WriteFileBytes(middle, ReadFileBytes(middle).substr(0, kHeader + 20));
  rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kTornTail);
  EXPECT_FALSE(rec.damage[0].cut);  // only the newest segment is ever cut
  EXPECT_EQ(rec.damage[0].first_lost, 5u);
  EXPECT_EQ(rec.damage[0].records_lost.value_or(0), 4u);
  EXPECT_EQ(got, 14u);
}

TEST(LogLossTest, OlderSegmentEndingInALargeFrameIsCheckedFromItsEnd) {
  // Frames of 100, 5,000 and 10,000 records (4 KB, 200 KB, 400 KB): the
  // writer finds each older segment's last record by looking back from its end.
  for (uint64_t frame : {uint64_t{100}, uint64_t{5000}, uint64_t{10000}}) {
    SCOPED_TRACE("frame of " + std::to_string(frame));
    ScratchDir dir;
    const std::string log = dir.File("log");
    {
      auto w = LogWriter::Open(log, Options(kHeader + 16 + frame * 40));  // one frame per segment
      ASSERT_OK(w);
      for (int k = 0; k < 3; ++k) ASSERT_OK((*w)->Append(Recs(frame)));
      ASSERT_OK((*w)->Close());
    }
    ASSERT_EQ(ListLogSegments(log)->size(), 3u);
    for (uint64_t k = 0; k < 3; ++k) {
      auto s = SegmentScanner::Open(Segment(log, k * frame + 1), k * frame + 1);
      ASSERT_OK(s);
      auto last = (*s)->LastSequenceAtEnd();
      ASSERT_OK(last);
      EXPECT_EQ(last->value_or(0), (k + 1) * frame);
    }
    {  // A torn end is no valid frame: the caller scans.
      const std::string first = Segment(log, 1);
      const std::string good = ReadFileBytes(first);
      WriteFileBytes(first, good.substr(0, good.size() - 1));
      auto s = SegmentScanner::Open(first, 1);
      ASSERT_OK(s);
      auto last = (*s)->LastSequenceAtEnd();
      ASSERT_OK(last);
      EXPECT_FALSE(last->has_value());
      WriteFileBytes(first, good);
    }
    uint64_t got = 0;
    EXPECT_TRUE(RecoverAndAppend(log, &got).damage.empty());
    // The middle segment removed: the first one's end says where the gap begins.
    ASSERT_EQ(::unlink(Segment(log, frame + 1).c_str()), 0);
    LogRecovery rec = RecoverAndAppend(log, &got);
    ASSERT_EQ(rec.damage.size(), 1u);
    EXPECT_EQ(rec.damage[0].kind, Kind::kMissingRecords);
    EXPECT_EQ(rec.damage[0].first_lost, frame + 1);
    EXPECT_EQ(rec.damage[0].records_lost.value_or(0), frame);
    EXPECT_EQ(got, 3 * frame + 2);
  }
}

TEST(LogLossTest, MinNextSequence) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 3);
  // The caller reflects records up to 7 (say, its checkpoint): 4..7 are lost.
  LogWriterOptions o = Options();
  o.min_next_sequence = 8;
  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got, o);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].ToString(),
            Segment(log, 1) +
                ": records missing at the end of the log (the log ends at sequence 3, but sequence "
                "7 is reflected by the log's user (its checkpoint)); 4 records lost (sequences 4..7)");
  EXPECT_EQ(got, 8u);
  // At or below the log's end: nothing newly lost, nothing skipped (the hole
  // 4..7 stays in the log and is reported as such).
  o.min_next_sequence = 5;
  rec = RecoverAndAppend(log, &got, o);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kMissingRecords);
  EXPECT_EQ(rec.damage[0].first_lost, 4u);
  EXPECT_EQ(got, 9u);
  // An empty log starts there.
  ScratchDir dir2;
  o.min_next_sequence = 100;
  rec = RecoverAndAppend(dir2.File("log"), &got, o);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].first_lost, 1u);
  EXPECT_EQ(rec.damage[0].records_lost.value_or(0), 99u);
  EXPECT_EQ(got, 100u);
}

TEST(LogLossTest, AKilledWriterKeepsTheSequenceDense) {
  // Same boot, no commit: every frame written is still in the log, so the
  // reservation ahead is not skipped (readers saw nothing beyond the log).
  ScratchDir dir;
  const std::string log = dir.File("log");
  {
    auto w = LogWriter::Open(log, Options());
    ASSERT_OK(w);
    ASSERT_OK((*w)->Append(Recs(3)));
    auto mark = ReadLogMark(log);
    ASSERT_OK(mark);
    ASSERT_TRUE(*mark);
    EXPECT_EQ((*mark)->logged, 0u);
    EXPECT_EQ((*mark)->reserved, 3u + kLogMarkReserveAhead);
  }  // destroyed without Close, as by SIGKILL
  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  EXPECT_TRUE(rec.damage.empty()) << rec.damage[0].ToString();
  EXPECT_EQ(got, 4u);
  EXPECT_TRUE(ReadAll(log).damage.empty());
  auto mark = ReadLogMark(log);
  ASSERT_OK(mark);
  ASSERT_TRUE(*mark);
  EXPECT_EQ((*mark)->logged, 4u);
}

// Rewrites the mark as if the machine that wrote it had booted differently.
void ForgeOtherBootMark(const std::string& log, uint64_t logged, uint64_t reserved) {
  LogMarkSlot s;
  std::memset(&s, 0, sizeof s);
  std::memcpy(s.magic, kLogMarkMagic, sizeof s.magic);
  s.version = kLogMarkVersion;
  s.generation = 1000;
  s.logged = logged;
  s.reserved = reserved;
  for (size_t k = 0; k < sizeof s.boot; ++k) s.boot[k] = static_cast<uint8_t>(CurrentLogBootId()[k] ^ 0x5A);
  s.crc = Crc32c(&s, offsetof(LogMarkSlot, crc));
  std::string bytes(reinterpret_cast<const char*>(&s), sizeof s);
  WriteFileBytes(LogMarkPath(log), bytes + bytes);
}

TEST(LogLossTest, AfterAMachineCrashReservedSequencesAreSkipped) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 3);
  // The writer had reserved up to 50 and synced up to 3 when the machine
  // stopped: records 4.. may have been read (page cache) and then lost.
  ForgeOtherBootMark(log, 3, 50);
  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kUnusedSequences);
  EXPECT_EQ(rec.damage[0].ToString(),
            LogMarkPath(log) + ": 47 sequences 4..50 not reused (" + rec.damage[0].problem + ")");
  EXPECT_EQ(got, 51u);
}

TEST(LogLossTest, AnUnreadableMarkIsReportedAndRewritten) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteCommitted(log, 3);
  WriteFileBytes(LogMarkPath(log), std::string(128, '\x7f'));
  ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 3));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kBadMark);
  EXPECT_EQ(r.damage[0].ToString(), LogMarkPath(log) +
                                        ": high-water mark unreadable (128 bytes, no slot checks); sequence numbers of "
                                        "lost records cannot be told");
  uint64_t got = 0;
  LogRecovery rec = RecoverAndAppend(log, &got);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kBadMark);
  EXPECT_EQ(got, 4u);
  EXPECT_TRUE(ReadAll(log).damage.empty());
  // One torn slot: the other still holds the mark before it.
  std::string bytes = ReadFileBytes(LogMarkPath(log));
  auto before = ReadLogMark(log);
  ASSERT_OK(before);
  ASSERT_TRUE(*before);
  const size_t newest_slot = ((*before)->generation % 2) * 64;
  bytes[newest_slot + 30] ^= 1;
  WriteFileBytes(LogMarkPath(log), bytes);
  auto after = ReadLogMark(log);
  ASSERT_OK(after);
  ASSERT_TRUE(*after);
  EXPECT_EQ((*after)->generation, (*before)->generation - 1);
  // A temporary left by a writer that crashed while it created the mark goes.
  WriteFileBytes(LogMarkPath(log) + ".tmp", "half");
  RecoverAndAppend(log, &got);
  EXPECT_FALSE(std::filesystem::exists(LogMarkPath(log) + ".tmp"));
}

}  // namespace
}  // namespace momenta
