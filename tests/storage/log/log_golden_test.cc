// The update log's format v1 stays readable: tests/data/golden_log_v1.log is a
// segment written by this version (dtype i4, array tag "momenta", first
// sequence 7; frames of 1, 3 and 2 records, listed in Golden() below). It must
// decode to exactly those records, and today's writer must still produce it
// byte for byte. A format change adds golden_log_v2.log and moves the
// byte-for-byte check to it; this file is never rewritten.
#include <gtest/gtest.h>

#include <filesystem>
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

using testing::ReadFileBytes;
using testing::ScratchDir;

constexpr uint64_t kTag = 0x61746E656D6F6Dull;  // "momenta" little-endian
const std::string kGolden = std::string(MOMENTA_TEST_DATA_DIR) + "/golden_log_v1.log";

struct GoldenRecord {
  int64_t time;
  uint64_t index;
  int64_t old_value, new_value;
};

// Sequences 7..12, in frames of 1, 3, 2.
const std::vector<std::vector<GoldenRecord>>& Golden() {
  static const std::vector<std::vector<GoldenRecord>> frames = {
      {{1700000000000, 0, 0, 42}},
      {{1700000000001, 5, 0, -1}, {1700000000001, 6, 0, 2147483647}, {-3, 99, 7, -2147483648}},
      {{1700000000500, 5, -1, 17}, {1700000000500, 1000000, 0, 123456}},
  };
  return frames;
}

TEST(LogGoldenTest, VersionOneStillDecodes) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  std::filesystem::create_directories(log);
  std::filesystem::copy_file(kGolden, log + "/" + LogSegmentName(7));
  auto reader = LogReader::Open(log);
  ASSERT_OK(reader);
  uint64_t sequence = 7;
  for (const auto& frame : Golden()) {
    for (const GoldenRecord& want : frame) {
      SCOPED_TRACE("sequence " + std::to_string(sequence));
      LogRecord got;
      auto next = (*reader)->Next(&got);
      ASSERT_OK(next);
      ASSERT_TRUE(*next);
      EXPECT_EQ((*reader)->dtype(), DType::kI4);
      EXPECT_EQ((*reader)->array_tag(), kTag);
      EXPECT_EQ(got.sequence, sequence);
      EXPECT_EQ(got.time, want.time);
      EXPECT_EQ(got.index, want.index);
      EXPECT_EQ(LogValueFromRaw(DType::kI4, got.old_raw).i, want.old_value);
      EXPECT_EQ(LogValueFromRaw(DType::kI4, got.new_raw).i, want.new_value);
      // Raw values are the 4 little-endian bytes, zero-padded.
      EXPECT_EQ(got.new_raw, static_cast<uint64_t>(static_cast<uint32_t>(want.new_value)));
      ++sequence;
    }
  }
  LogRecord extra;
  auto end = (*reader)->Next(&extra);
  ASSERT_OK(end);
  EXPECT_FALSE(*end);
  EXPECT_TRUE((*reader)->damage().empty());

  // A writer continues it.
  LogWriterOptions o;
  o.dtype = DType::kI4;
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  EXPECT_EQ((*w)->next_sequence(), 13u);
  EXPECT_TRUE((*w)->recovery().damage.empty());
}

TEST(LogGoldenTest, TodaysWriterProducesVersionOneByteForByte) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  LogWriterOptions o;
  o.dtype = DType::kI4;
  o.array_tag = kTag;
  o.first_sequence = 7;
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  for (const auto& frame : Golden()) {
    std::vector<LogRecord> records;
    for (const GoldenRecord& g : frame) {
      LogRecord r;
      r.time = g.time;
      r.index = g.index;
      r.old_raw = LogRawFromValue(DType::kI4, Value::Int(g.old_value));
      r.new_raw = LogRawFromValue(DType::kI4, Value::Int(g.new_value));
      records.push_back(r);
    }
    ASSERT_OK((*w)->Append(records));
  }
  ASSERT_OK((*w)->Close());
  const std::string written = ReadFileBytes(log + "/" + LogSegmentName(7));
  const std::string golden = ReadFileBytes(kGolden);
  ASSERT_EQ(golden.size(), 64u + 16 + 40 + 16 + 3 * 40 + 16 + 2 * 40);
  EXPECT_TRUE(written == golden) << "the writer's bytes differ from format v1";
}

}  // namespace
}  // namespace momenta
