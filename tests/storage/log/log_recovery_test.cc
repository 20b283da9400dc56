// Damage in the update log: every kind is reported, none is fatal, and every
// valid frame around it is kept. Torn tails at every byte offset, a flipped
// byte at every position of a middle frame (STYLE item 8: frame one back, one
// corruption reported, frame three back), garbage and zeros appended, empty and
// damaged segments, missing segments; the writer's recovery cuts only tails.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "storage/log/log_codec.h"
#include "storage/log/log_reader.h"
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
  o.sync = LogSync::kNone;
  return o;
}

LogRecord Rec(uint64_t i) {
  LogRecord r;
  r.index = i;
  r.time = static_cast<int64_t>(i) * 10;
  r.old_raw = i * 3;
  r.new_raw = i * 3 + 1;
  return r;
}

// Appends frames of the given sizes; records are Rec(sequence - 1).
void WriteFrames(const std::string& log, const std::vector<size_t>& frames, uint64_t segment_bytes = 64 << 20) {
  auto w = LogWriter::Open(log, Options(segment_bytes));
  ASSERT_OK(w);
  for (size_t n : frames) {
    std::vector<LogRecord> recs;
    for (size_t k = 0; k < n; ++k) recs.push_back(Rec((*w)->next_sequence() - 1 + k));
    ASSERT_OK((*w)->Append(recs));
  }
  ASSERT_OK((*w)->Close());
}

// Appends one frame of n records and stops as a killed writer would: no
// Commit, so the high-water mark does not cover it (a torn tail of this frame
// loses no committed record).
void AppendUncommitted(const std::string& log, size_t n) {
  auto w = LogWriter::Open(log, Options());
  ASSERT_OK(w);
  std::vector<LogRecord> recs;
  for (size_t k = 0; k < n; ++k) recs.push_back(Rec((*w)->next_sequence() - 1 + k));
  ASSERT_OK((*w)->Append(recs));
}

struct ReadResult {
  std::vector<uint64_t> sequences;
  std::vector<LogDamage> damage;
  bool ok = true;
};

ReadResult ReadAll(const std::string& log, LogReaderOptions options = {}) {
  ReadResult r;
  auto reader = LogReader::Open(log, options);
  EXPECT_OK(reader);
  if (!reader.ok()) return r;
  LogRecord rec;
  for (;;) {
    auto got = (*reader)->Next(&rec);
    EXPECT_OK(got);
    if (!got.ok() || !*got) break;
    EXPECT_EQ(rec, [&] {
      LogRecord w = Rec(rec.sequence - 1);
      w.sequence = rec.sequence;
      return w;
    }());
    r.sequences.push_back(rec.sequence);
  }
  r.damage = (*reader)->damage();
  return r;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {  // [first, last]
  std::vector<uint64_t> v;
  for (uint64_t s = first; s <= last; ++s) v.push_back(s);
  return v;
}

std::string Segment(const std::string& log, uint64_t first) { return log + "/" + LogSegmentName(first); }

// Opens (recovers) and closes a writer; returns its recovery report.
LogRecovery Recover(const std::string& log, uint64_t* next = nullptr) {
  auto w = LogWriter::Open(log, Options());
  EXPECT_OK(w);
  if (!w.ok()) return {};
  if (next) *next = (*w)->next_sequence();
  return (*w)->recovery();
}

TEST(LogRecoveryTest, FlippedByteInFrameTwoOfThree) {
  // Three one-record frames: 64 + 3 * 56 bytes. Every byte of frame two, and
  // every one-bit and all-bits flip of it.
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {1, 1, 1});
  const std::string path = Segment(log, 1);
  const std::string good = ReadFileBytes(path);
  ASSERT_EQ(good.size(), kHeader + 3 * 56);
  for (uint64_t at = kHeader + 56; at < kHeader + 112; ++at) {
    for (unsigned mask : {0x01u, 0x80u, 0xFFu}) {
      SCOPED_TRACE("byte " + std::to_string(at) + " ^ " + std::to_string(mask));
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ mask);
      WriteFileBytes(path, bad);
      const ReadResult r = ReadAll(log);
      EXPECT_EQ(r.sequences, (std::vector<uint64_t>{1, 3}));
      ASSERT_EQ(r.damage.size(), 1u);
      EXPECT_EQ(r.damage[0].kind, Kind::kCorruptFrames);
      EXPECT_EQ(r.damage[0].offset, kHeader + 56);
      EXPECT_EQ(r.damage[0].bytes, 56u);
      ASSERT_TRUE(r.damage[0].records_lost.has_value());
      EXPECT_EQ(*r.damage[0].records_lost, 1u);
      EXPECT_EQ(r.damage[0].first_lost, 2u);
      EXPECT_FALSE(r.damage[0].cut);
    }
  }
  // The writer keeps the middle damage (readers skip it) and goes on after frame three.
  uint64_t next = 0;
  const LogRecovery rec = Recover(log, &next);
  EXPECT_EQ(next, 4u);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].ToString(), path + ": 56 corrupt bytes at offset 120 skipped (" + rec.damage[0].problem +
                                          "); 1 record lost (sequence 2)");
  EXPECT_EQ(rec.bytes_cut, 0u);
  WriteFrames(log, {2});
  EXPECT_EQ(ReadAll(log).sequences, (std::vector<uint64_t>{1, 3, 4, 5}));
}

TEST(LogRecoveryTest, FlippedByteAnywhereInAMiddleBatchFrame) {
  // Frames of 4, 5 and 3 records; each byte of the 5-record frame flipped in turn.
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {4, 5, 3});
  const std::string path = Segment(log, 1);
  const std::string good = ReadFileBytes(path);
  const uint64_t begin = kHeader + LogFrameBytes(4), end = begin + LogFrameBytes(5);
  for (uint64_t at = begin; at < end; ++at) {
    SCOPED_TRACE("byte " + std::to_string(at));
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    WriteFileBytes(path, bad);
    const ReadResult r = ReadAll(log);
    std::vector<uint64_t> want = Range(1, 4);
    for (uint64_t s : Range(10, 12)) want.push_back(s);
    EXPECT_EQ(r.sequences, want);
    ASSERT_EQ(r.damage.size(), 1u);
    EXPECT_EQ(r.damage[0].kind, Kind::kCorruptFrames);
    EXPECT_EQ(r.damage[0].offset, begin);
    EXPECT_EQ(r.damage[0].bytes, end - begin);
    EXPECT_EQ(r.damage[0].records_lost.value_or(99), 5u);
    EXPECT_EQ(r.damage[0].first_lost, 5u);
  }
}

TEST(LogRecoveryTest, TornTailAtEveryByteOffsetOfTheLastFrame) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {1, 3, 2});
  AppendUncommitted(log, 4);
  const std::string path = Segment(log, 1);
  const std::string good = ReadFileBytes(path);
  const uint64_t last_begin = good.size() - LogFrameBytes(4);
  for (uint64_t cut = last_begin; cut < good.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    WriteFileBytes(path, good.substr(0, cut));
    const ReadResult r = ReadAll(log);
    EXPECT_EQ(r.sequences, Range(1, 6));
    if (cut == last_begin) {
      EXPECT_TRUE(r.damage.empty());
    } else {
      ASSERT_EQ(r.damage.size(), 1u);
      EXPECT_EQ(r.damage[0].kind, Kind::kTornTail);
      EXPECT_EQ(r.damage[0].offset, last_begin);
      EXPECT_EQ(r.damage[0].bytes, cut - last_begin);
      // The header (16 bytes) tells how many records the torn frame held.
      if (cut - last_begin >= 16) {
        EXPECT_EQ(r.damage[0].records_lost.value_or(99), 4u);
      } else {
        EXPECT_FALSE(r.damage[0].records_lost.has_value());
      }
    }
    uint64_t next = 0;
    const LogRecovery rec = Recover(log, &next);
    EXPECT_EQ(next, 7u);
    EXPECT_EQ(rec.bytes_cut, cut - last_begin);
    if (cut > last_begin) {
      ASSERT_EQ(rec.damage.size(), 1u);
      EXPECT_TRUE(rec.damage[0].cut);
      EXPECT_NE(rec.damage[0].ToString().find("torn tail of " + std::to_string(cut - last_begin) + " byte"),
                std::string::npos)
          << rec.damage[0].ToString();
    }
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), last_begin);
    EXPECT_TRUE(ReadAll(log).damage.empty());
  }
  // And the log goes on where it was cut.
  WriteFrames(log, {2});
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 8));
}

TEST(LogRecoveryTest, GarbageOrZerosAppended) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 40; ++round) {
    ScratchDir dir;
    const std::string log = dir.File("log");
    WriteFrames(log, {2, 2});
    const std::string path = Segment(log, 1);
    std::string bytes = ReadFileBytes(path);
    const size_t size = bytes.size();
    const size_t extra = 1 + rng() % 5000;
    for (size_t k = 0; k < extra; ++k) bytes.push_back(round % 4 == 0 ? '\0' : static_cast<char>(rng()));
    WriteFileBytes(path, bytes);
    const ReadResult r = ReadAll(log);
    EXPECT_EQ(r.sequences, Range(1, 4));
    ASSERT_EQ(r.damage.size(), 1u);
    EXPECT_EQ(r.damage[0].kind, Kind::kTornTail);
    EXPECT_EQ(r.damage[0].offset, size);
    EXPECT_EQ(r.damage[0].bytes, extra);
    uint64_t next = 0;
    EXPECT_EQ(Recover(log, &next).bytes_cut, extra);
    EXPECT_EQ(next, 5u);
    EXPECT_EQ(ReadFileBytes(path).size(), size);
  }
}

TEST(LogRecoveryTest, EmptyAndHeaderOnlySegments) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {3});
  // An empty or cut-short newest segment (the writer publishes whole headers,
  // but a machine crash under kNone or a copy can leave these).
  for (size_t partial : {size_t{0}, size_t{10}, size_t{kHeader - 1}}) {
    SCOPED_TRACE("partial header of " + std::to_string(partial) + " bytes");
    const std::string next_path = Segment(log, 4);
    const std::string header = ReadFileBytes(Segment(log, 1)).substr(0, partial);
    WriteFileBytes(next_path, header);
    const ReadResult r = ReadAll(log);
    EXPECT_EQ(r.sequences, Range(1, 3));
    ASSERT_EQ(r.damage.size(), 1u);
    EXPECT_EQ(r.damage[0].kind, Kind::kBadSegment);
    uint64_t next = 0;
    const LogRecovery rec = Recover(log, &next);
    EXPECT_EQ(next, 4u);
    ASSERT_EQ(rec.damage.size(), 1u);
    EXPECT_TRUE(rec.damage[0].cut);
    EXPECT_EQ(rec.damage[0].ToString(), next_path + ": segment removed (" + rec.damage[0].problem + ")");
    EXPECT_FALSE(std::filesystem::exists(next_path));
  }
  // A segment with its header and no frame (a crash before the first frame).
  {
    auto w = LogWriter::Open(log, Options(kHeader + 100));  // rotates at the next frame
    ASSERT_OK(w);
    ASSERT_OK((*w)->Append(std::vector<LogRecord>{Rec(3)}));
  }
  ASSERT_TRUE(std::filesystem::exists(Segment(log, 4)));
  WriteFileBytes(Segment(log, 4), ReadFileBytes(Segment(log, 4)).substr(0, kHeader));
  ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 3));
  EXPECT_TRUE(r.damage.empty());
  uint64_t next = 0;
  EXPECT_TRUE(Recover(log, &next).damage.empty());
  EXPECT_EQ(next, 4u);
  WriteFrames(log, {1});
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 4));
}

TEST(LogRecoveryTest, UnpublishedSegmentsOfACrashedWriterAreRemoved) {
  // A writer builds a new segment under "<name>.tmp" and renames it into place.
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {2});
  const std::string temp = Segment(log, 3) + ".tmp";
  WriteFileBytes(temp, ReadFileBytes(Segment(log, 1)).substr(0, 20));
  const std::string other = log + "/notes.tmp";
  WriteFileBytes(other, "kept");
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 2));
  uint64_t next = 0;
  EXPECT_TRUE(Recover(log, &next).damage.empty());
  EXPECT_EQ(next, 3u);
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_TRUE(std::filesystem::exists(other));
}

TEST(LogRecoveryTest, DamagedOlderSegmentsAreSkippedAndCounted) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  // Segments of 4 one-record frames each (64 + 4 * 56 = 288 bytes).
  WriteFrames(log, std::vector<size_t>(12, 1), kHeader + 4 * 56);
  auto segments = ListLogSegments(log);
  ASSERT_EQ(segments->size(), 3u);
  ASSERT_EQ((*segments)[1].first_sequence, 5u);
  const std::string good = ReadFileBytes((*segments)[1].path);

  // Emptied: every record of it lost, counted from the next segment.
  WriteFileBytes((*segments)[1].path, "");
  ReadResult r = ReadAll(log);
  std::vector<uint64_t> want = Range(1, 4);
  for (uint64_t s : Range(9, 12)) want.push_back(s);
  EXPECT_EQ(r.sequences, want);
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kBadSegment);
  EXPECT_EQ(r.damage[0].ToString(), (*segments)[1].path +
                                        ": segment skipped (segment header is short (0 of 64 bytes)); 4 records lost "
                                        "(sequences 5..8)");
  LogRecovery rec = Recover(log);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].ToString(), r.damage[0].ToString());

  // Torn tail of an older segment: a crash of the machine under kNone.
  WriteFileBytes((*segments)[1].path, good.substr(0, good.size() - 30));
  r = ReadAll(log);
  EXPECT_EQ(r.sequences.size(), 11u);
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kTornTail);
  EXPECT_EQ(r.damage[0].records_lost.value_or(99), 1u);
  EXPECT_EQ(r.damage[0].first_lost, 8u);
  // The writer reports it too (checked against the next segment's first
  // sequence), and leaves the older segment as it is.
  const std::string cut_short = ReadFileBytes((*segments)[1].path);
  rec = Recover(log);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kTornTail);
  EXPECT_FALSE(rec.damage[0].cut);
  EXPECT_EQ(rec.damage[0].ToString(), (*segments)[1].path + ": torn tail of 26 bytes at offset 232 (" +
                                          rec.damage[0].problem + "); 1 record lost (sequence 8)");
  EXPECT_EQ(ReadFileBytes((*segments)[1].path), cut_short);

  // Removed by hand: the gap is reported.
  ASSERT_EQ(::unlink((*segments)[1].path.c_str()), 0);
  r = ReadAll(log);
  EXPECT_EQ(r.sequences, want);
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kMissingRecords);
  EXPECT_EQ(r.damage[0].records_lost.value_or(99), 4u);
  EXPECT_EQ(r.damage[0].first_lost, 5u);
  rec = Recover(log);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].ToString(), (*segments)[2].path +
                                          ": records missing before offset 64; 4 records lost "
                                          "(sequences 5..8)");
}

TEST(LogRecoveryTest, BadHeaderOfTheNewestSegmentStartsANewOne) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {2, 2});
  const std::string path = Segment(log, 1);
  std::string bytes = ReadFileBytes(path);
  bytes[20] ^= 1;  // inside first_sequence: the header crc fails
  WriteFileBytes(path, bytes);
  uint64_t next = 0;
  const LogRecovery rec = Recover(log, &next);
  EXPECT_EQ(next, 5u);  // from the valid frames behind the bad header
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kBadSegment);
  EXPECT_FALSE(rec.damage[0].cut);
  EXPECT_EQ(ReadFileBytes(path), bytes);  // kept for inspection
  WriteFrames(log, {1});
  EXPECT_TRUE(std::filesystem::exists(Segment(log, 5)));
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, (std::vector<uint64_t>{5}));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kBadSegment);
  EXPECT_EQ(r.damage[0].records_lost.value_or(99), 4u);
}

TEST(LogRecoveryTest, MiddleDamageKeptTailCutInTheNewestSegment) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {1, 1, 1});
  AppendUncommitted(log, 1);
  const std::string path = Segment(log, 1);
  std::string bytes = ReadFileBytes(path);
  bytes[kHeader + 56 + 30] ^= 4;   // frame two
  bytes.resize(bytes.size() - 3);  // frame four torn
  WriteFileBytes(path, bytes);
  uint64_t next = 0;
  const LogRecovery rec = Recover(log, &next);
  EXPECT_EQ(next, 4u);
  ASSERT_EQ(rec.damage.size(), 2u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kCorruptFrames);
  EXPECT_EQ(rec.damage[0].records_lost.value_or(99), 1u);
  EXPECT_FALSE(rec.damage[0].cut);
  EXPECT_EQ(rec.damage[1].kind, Kind::kTornTail);
  EXPECT_TRUE(rec.damage[1].cut);
  EXPECT_EQ(rec.bytes_cut, 53u);
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(r.damage.size(), 1u);
}

TEST(LogRecoveryTest, NewerFormatVersionIsAnErrorNotDamage) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {1});
  LogSegmentHeader h = MakeLogSegmentHeader(1, DType::kI8, 0);
  h.version = 2;
  h.crc = Crc32c(&h, offsetof(LogSegmentHeader, crc));
  const std::string path = Segment(log, 1);
  std::string bytes = ReadFileBytes(path);
  std::memcpy(bytes.data(), &h, sizeof h);
  WriteFileBytes(path, bytes);
  auto reader = LogReader::Open(log);
  ASSERT_OK(reader);
  LogRecord rec;
  EXPECT_EQ((*reader)->Next(&rec).status().ToString(),
            "Not supported: " + path + ": update-log format version 2 is newer than this momenta reads (1)");
  EXPECT_EQ(LogWriter::Open(log, Options()).status().code(), Status::Code::kNotSupported);
  EXPECT_EQ(ReadFileBytes(path), bytes);  // nothing cut
}

// Segments that overlap (an older one, restored or copied in, running past
// a newer one's first sequence): readers return the older one's records and
// skip the newer one's up to them as damage, so the writer must go on above
// the older one's last record, not reuse its sequences. (Found by the `log`
// fuzz target.)
TEST(LogRecoveryTest, OverlappingSegmentsNeverReuseASequence) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  auto segment = [](uint64_t first, const std::vector<std::vector<uint64_t>>& frames) {
    const LogSegmentHeader h = MakeLogSegmentHeader(first, DType::kI8, 0);
    std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
    for (const auto& sequences : frames) {
      std::vector<LogRecord> recs;
      for (uint64_t q : sequences) {
        recs.push_back(Rec(q - 1));
        recs.back().sequence = q;
      }
      AppendLogFrame(recs, &bytes);
    }
    return bytes;
  };
  WriteFileBytes(Segment(log, 1), segment(1, {{1, 2, 3}, {4, 5, 6, 7, 8, 9, 10}}));
  WriteFileBytes(Segment(log, 5), segment(5, {{5, 6}}));
  ASSERT_EQ(ReadAll(log).sequences, Range(1, 10));

  auto w = LogWriter::Open(log, Options());
  ASSERT_OK(w);
  EXPECT_EQ((*w)->next_sequence(), 11u);
  auto first = (*w)->Append(std::vector<LogRecord>{Rec(10)});
  ASSERT_OK(first);
  EXPECT_EQ(*first, 11u);
  ASSERT_OK((*w)->Close());
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 11));
}

// Found by the `log` fuzz target (tests/data/fuzz/log/crash-append_hides_records).
// A damaged frame whose header checks claims bytes that hold valid frames and
// run exactly to the end of the file. Readers return those inner frames; an
// append must not make them jump to the claimed end (now the new frame) and
// hide records they returned.
TEST(LogRecoveryTest, AnAppendNeverHidesRecordsInsideADamagedFramesClaim) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  auto frame = [](std::vector<uint64_t> sequences) {
    std::vector<LogRecord> recs;
    for (uint64_t q : sequences) {
      recs.push_back(Rec(q - 1));
      recs.back().sequence = q;
    }
    std::string bytes;
    AppendLogFrame(recs, &bytes);
    return bytes;
  };
  const LogSegmentHeader h = MakeLogSegmentHeader(1, DType::kI8, 0);
  std::string inner;  // frames of one record, 3, 4, ..., as many as make whole records
  uint64_t last = 2;
  do {
    inner += frame({++last});
  } while (inner.size() % sizeof(LogRecord) != 0);
  std::vector<uint64_t> claim;  // a frame whose payload is exactly `inner`'s size
  for (uint64_t q = 3; claim.size() < inner.size() / sizeof(LogRecord); ++q) claim.push_back(q);
  const std::string damaged = frame(claim).substr(0, sizeof(LogFrameHeader)) + inner;  // payload crc fails
  WriteFileBytes(Segment(log, 1), std::string(reinterpret_cast<const char*>(&h), sizeof h) + frame({1, 2}) + damaged);
  const ReadResult before = ReadAll(log);
  ASSERT_EQ(before.sequences, Range(1, last));

  auto w = LogWriter::Open(log, Options());
  ASSERT_OK(w);
  EXPECT_EQ((*w)->recovery().bytes_cut, 0u);
  EXPECT_EQ((*w)->next_sequence(), last + 1);
  ASSERT_OK((*w)->Append(std::vector<LogRecord>{Rec(last)}));
  ASSERT_OK((*w)->Close());
  EXPECT_EQ(ReadAll(log).sequences, Range(1, last + 1));
}

// A frame whose header checks but which runs past the end of the file hides
// none of the valid frames inside its claim, before an append or after it.
TEST(LogRecoveryTest, AFrameRunningPastTheEndHidesNoFramesInsideItsClaim) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  std::string bytes;
  const LogSegmentHeader h = MakeLogSegmentHeader(1, DType::kI8, 0);
  bytes.assign(reinterpret_cast<const char*>(&h), sizeof h);
  std::vector<LogRecord> recs = {Rec(0), Rec(1)};
  recs[0].sequence = 1;
  recs[1].sequence = 2;
  AppendLogFrame(recs, &bytes);
  std::string torn;
  recs = {Rec(2), Rec(3), Rec(4)};
  for (size_t k = 0; k < recs.size(); ++k) recs[k].sequence = 3 + k;
  AppendLogFrame(recs, &torn);
  std::string later;
  recs = {Rec(2)};
  recs[0].sequence = 3;
  AppendLogFrame(recs, &later);
  // garbage, then the header of a frame of three and one record of it, then a
  // valid frame inside that frame's claim
  WriteFileBytes(Segment(log, 1),
                 bytes + std::string(7, '\x5A') + torn.substr(0, sizeof(LogFrameHeader) + sizeof(LogRecord)) + later);
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 3));

  auto w = LogWriter::Open(log, Options());
  ASSERT_OK(w);
  EXPECT_EQ((*w)->recovery().bytes_cut, 0u);
  ASSERT_OK((*w)->Append(std::vector<LogRecord>{Rec(3)}));
  ASSERT_OK((*w)->Close());
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 4));
}

// ---- Valid records out of place: reported and skipped, never cut ------------

// A segment's bytes: header (first sequence `first`), then one frame per
// list of sequences, records Rec(sequence - 1).
std::string SegmentBytes(uint64_t first, const std::vector<std::vector<uint64_t>>& frames) {
  const LogSegmentHeader h = MakeLogSegmentHeader(first, DType::kI8, 0);
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  for (const auto& sequences : frames) {
    std::vector<LogRecord> recs;
    for (uint64_t q : sequences) {
      recs.push_back(Rec(q - 1));
      recs.back().sequence = q;
    }
    AppendLogFrame(recs, &bytes);
  }
  return bytes;
}

std::vector<uint64_t> Seqs(uint64_t first, uint64_t last) { return Range(first, last); }

// Where frame k (0-based) of SegmentBytes(_, frames) begins.
uint64_t FrameOffset(const std::vector<std::vector<uint64_t>>& frames, size_t k) {
  uint64_t at = kHeader;
  for (size_t i = 0; i < k; ++i) at += LogFrameBytes(frames[i].size());
  return at;
}

std::vector<uint64_t> Concat(std::vector<std::vector<uint64_t>> parts) {
  std::vector<uint64_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

void ExpectOutOfPlace(const LogDamage& d, const std::string& segment, uint64_t offset, uint64_t first, uint64_t count,
                      uint64_t after) {
  EXPECT_EQ(d.kind, Kind::kOutOfPlace) << d.ToString();
  EXPECT_EQ(d.segment, segment);
  EXPECT_EQ(d.offset, offset) << d.ToString();
  EXPECT_EQ(d.first_skipped, first) << d.ToString();
  EXPECT_EQ(d.records_skipped, count) << d.ToString();
  EXPECT_EQ(d.after, after) << d.ToString();
  EXPECT_FALSE(d.cut);
  EXPECT_EQ(d.records_lost.value_or(99), 0u) << d.ToString();
  const std::string text = d.ToString();
  EXPECT_NE(text.find("at offset " + std::to_string(offset)), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(first)), std::string::npos) << text;
}

// The writer's recovery of `log` cuts nothing, changes no byte, and hands
// out `next`; returns its report.
LogRecovery ExpectRecoveryKeepsEverything(const std::string& log, const std::string& segment, uint64_t next) {
  const std::string before = ReadFileBytes(segment);
  uint64_t got = 0;
  LogRecovery rec = Recover(log, &got);
  EXPECT_EQ(rec.bytes_cut, 0u);
  for (const LogDamage& d : rec.damage) EXPECT_FALSE(d.cut) << d.ToString();
  EXPECT_EQ(ReadFileBytes(segment), before);
  EXPECT_EQ(got, next);
  return rec;
}

TEST(LogRecoveryTest, ADuplicatedFrameIsSkippedAndKept) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  const std::vector<std::vector<uint64_t>> frames = {{1, 2, 3},   {4, 5},       Seqs(6, 10),
                                                     Seqs(6, 10), Seqs(11, 15), Seqs(16, 20)};
  const std::string seg = Segment(log, 1);
  WriteFileBytes(seg, SegmentBytes(1, frames));
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 20));
  ASSERT_EQ(r.damage.size(), 1u);
  ExpectOutOfPlace(r.damage[0], seg, FrameOffset(frames, 3), 6, 5, 10);
  EXPECT_EQ(r.damage[0].problem, "a duplicate");
  LogReaderOptions every;
  every.out_of_order = true;  // a duplicate is still returned once
  EXPECT_EQ(ReadAll(log, every).sequences, Range(1, 20));

  const LogRecovery rec = ExpectRecoveryKeepsEverything(log, seg, 21);
  ASSERT_EQ(rec.damage.size(), 1u);
  ExpectOutOfPlace(rec.damage[0], seg, FrameOffset(frames, 3), 6, 5, 10);
  WriteFrames(log, {1});
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 21));
}

TEST(LogRecoveryTest, AFrameOverlappingTheOneBeforeKeepsItsNewRecords) {
  // Records 6..10 written again at the head of a frame that goes on with
  // 11..15: the 11..15 are read (and were cut as a "torn tail" before).
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  const std::vector<std::vector<uint64_t>> frames = {Seqs(1, 10), Seqs(6, 15)};
  const std::string seg = Segment(log, 1);
  WriteFileBytes(seg, SegmentBytes(1, frames));
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 15));
  ASSERT_EQ(r.damage.size(), 1u);
  ExpectOutOfPlace(r.damage[0], seg, FrameOffset(frames, 1), 6, 5, 10);
  ExpectRecoveryKeepsEverything(log, seg, 16);
  EXPECT_EQ(ReadAll(log).sequences, Range(1, 15));
}

TEST(LogRecoveryTest, SwappedFramesAreReportedAndNeitherIsCut) {
  for (const bool at_tail : {false, true}) {
    SCOPED_TRACE(at_tail ? "swap at the tail" : "swap in the middle");
    ScratchDir dir;
    const std::string log = dir.File("log");
    std::filesystem::create_directories(log);
    std::vector<std::vector<uint64_t>> frames = {Seqs(1, 5), Seqs(11, 15), Seqs(6, 10)};
    if (!at_tail) frames.push_back(Seqs(16, 20));
    const uint64_t last = at_tail ? 15 : 20;
    const std::string seg = Segment(log, 1);
    WriteFileBytes(seg, SegmentBytes(1, frames));
    // Replay's reader: strictly increasing sequences; 6..10 reported twice
    // over (missing where they belong, out of place where they lie).
    const ReadResult r = ReadAll(log);
    EXPECT_EQ(r.sequences, Concat({Seqs(1, 5), Seqs(11, last)}));
    ASSERT_EQ(r.damage.size(), 2u);
    EXPECT_EQ(r.damage[0].kind, Kind::kMissingRecords);
    EXPECT_EQ(r.damage[0].first_lost, 6u);
    ExpectOutOfPlace(r.damage[1], seg, FrameOffset(frames, 2), 6, 5, 15);
    EXPECT_EQ(r.damage[1].problem, "out of order");
    EXPECT_FALSE(r.damage[1].returned);
    // `momenta log`'s reader: every valid record once, in file order.
    LogReaderOptions every;
    every.out_of_order = true;
    const ReadResult all = ReadAll(log, every);
    EXPECT_EQ(all.sequences, Concat({Seqs(1, 5), Seqs(11, 15), Seqs(6, 10), Seqs(16, last)}));
    ASSERT_EQ(all.damage.size(), 2u);
    EXPECT_TRUE(all.damage[1].returned);

    ExpectRecoveryKeepsEverything(log, seg, last + 1);
    WriteFrames(log, {1});
    EXPECT_EQ(ReadAll(log).sequences, Concat({Seqs(1, 5), Seqs(11, last + 1)}));
  }
}

TEST(LogRecoveryTest, ADuplicateAtTheTailIsNoTornTail) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  const std::vector<std::vector<uint64_t>> frames = {Seqs(1, 5), Seqs(6, 10), Seqs(6, 10)};
  const std::string seg = Segment(log, 1);
  WriteFileBytes(seg, SegmentBytes(1, frames));
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 10));
  ASSERT_EQ(r.damage.size(), 1u);
  ExpectOutOfPlace(r.damage[0], seg, FrameOffset(frames, 2), 6, 5, 10);
  const LogRecovery rec = ExpectRecoveryKeepsEverything(log, seg, 11);
  ASSERT_EQ(rec.damage.size(), 1u);
  EXPECT_EQ(rec.damage[0].kind, Kind::kOutOfPlace);
  // The next append lands after the duplicate.
  WriteFrames(log, {2});
  const ReadResult after = ReadAll(log);
  EXPECT_EQ(after.sequences, Range(1, 12));
  ASSERT_EQ(after.damage.size(), 1u);
  EXPECT_EQ(after.damage[0].kind, Kind::kOutOfPlace);
}

TEST(LogRecoveryTest, GarbageAfterADuplicateIsCutAndTheDuplicateKept) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  const std::vector<std::vector<uint64_t>> frames = {Seqs(1, 5), Seqs(6, 10), Seqs(6, 10)};
  const std::string seg = Segment(log, 1);
  const std::string whole = SegmentBytes(1, frames);
  const std::string garbage = "\x01 not a frame: 37 bytes of garbage! \xfe";
  ASSERT_EQ(garbage.size(), 37u);
  WriteFileBytes(seg, whole + garbage);
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 10));
  ASSERT_EQ(r.damage.size(), 2u);
  ExpectOutOfPlace(r.damage[0], seg, FrameOffset(frames, 2), 6, 5, 10);
  EXPECT_EQ(r.damage[1].kind, Kind::kTornTail);
  EXPECT_EQ(r.damage[1].offset, whole.size());
  EXPECT_EQ(r.damage[1].bytes, garbage.size());
  uint64_t next = 0;
  const LogRecovery rec = Recover(log, &next);
  EXPECT_EQ(rec.bytes_cut, garbage.size());
  EXPECT_EQ(ReadFileBytes(seg), whole);  // the torn tail only
  EXPECT_EQ(next, 11u);
}

TEST(LogRecoveryTest, ANewestSegmentWithABadHeaderAndOnlyDuplicatesIsKept) {
  // Found by the `log` fuzz target's seeds: such a segment was removed (its
  // frames were damage then); kept now, the writer appends to a new segment
  // named above it.
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  WriteFileBytes(Segment(log, 1), SegmentBytes(1, {Seqs(1, 5)}));
  std::string newest = SegmentBytes(6, {{3, 4}});
  newest[40] ^= 1;  // a zero byte of the header: its crc fails
  WriteFileBytes(Segment(log, 6), newest);
  {
    auto w = LogWriter::Open(log, Options());
    ASSERT_OK(w);
    EXPECT_EQ((*w)->recovery().bytes_cut, 0u);
    EXPECT_EQ((*w)->next_sequence(), 7u);
    ASSERT_OK((*w)->Append(std::vector<LogRecord>{Rec(6)}));
    ASSERT_OK((*w)->Close());
  }
  EXPECT_EQ(ReadFileBytes(Segment(log, 6)), newest);
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Concat({Seqs(1, 5), {7}}));
  ASSERT_FALSE(r.damage.empty());
  EXPECT_EQ(r.damage[0].kind, Kind::kBadSegment);
  EXPECT_EQ(r.damage[0].records_lost.value_or(0), 1u);  // sequence 6: never used
}

TEST(LogRecoveryTest, ARecoveryThatMayNotCutChangesNoByte) {
  // The recovery a read-only opener runs (LogWriterOptions::cut_torn_tail
  // false): a torn tail is reported and left; appends go to a new segment.
  ScratchDir dir;
  const std::string log = dir.File("log");
  WriteFrames(log, {2, 2});
  const std::string seg = Segment(log, 1);
  const std::string whole = ReadFileBytes(seg);
  WriteFileBytes(seg, whole + std::string(23, '\x7f'));
  LogWriterOptions o = Options();
  o.cut_torn_tail = false;
  {
    auto w = LogWriter::Open(log, o);
    ASSERT_OK(w);
    EXPECT_EQ((*w)->recovery().bytes_cut, 0u);
    ASSERT_EQ((*w)->recovery().damage.size(), 1u);
    EXPECT_EQ((*w)->recovery().damage[0].kind, Kind::kTornTail);
    EXPECT_FALSE((*w)->recovery().damage[0].cut);
    EXPECT_EQ((*w)->next_sequence(), 5u);
    ASSERT_OK((*w)->Append(std::vector<LogRecord>{Rec(4)}));
    ASSERT_OK((*w)->Close());
  }
  EXPECT_EQ(ReadFileBytes(seg), whole + std::string(23, '\x7f'));
  const ReadResult r = ReadAll(log);
  EXPECT_EQ(r.sequences, Range(1, 5));
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].kind, Kind::kTornTail);
  EXPECT_TRUE(std::filesystem::exists(Segment(log, 5)));
}

}  // namespace
}  // namespace momenta
