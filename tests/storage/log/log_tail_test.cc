// Following a live log (LogReaderOptions::follow): a reader polling beside a
// writer sees every record in order across rotations; a frame still being
// written is waited for, not reported; a tail cut by the next writer's
// recovery is never reported either.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/log/log_codec.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using namespace std::chrono_literals;
using testing::ReadFileBytes;
using testing::ScratchDir;
using testing::WriteFileBytes;

std::vector<LogRecord> Records(uint64_t first_index, size_t n) {
  std::vector<LogRecord> out(n);
  for (size_t k = 0; k < n; ++k) {
    out[k].index = first_index + k;
    out[k].new_raw = (first_index + k) * 7;
  }
  return out;
}

// True when a record came; a failed expectation on an error.
bool Got(Result<bool> r) {
  EXPECT_OK(r);
  return r.ok() && *r;
}

std::unique_ptr<LogReader> Follow(const std::string& log, uint64_t from = 0) {
  LogReaderOptions o;
  o.follow = true;
  o.from_sequence = from;
  auto r = LogReader::Open(log, o);
  EXPECT_OK(r);
  return r.ok() ? std::move(*r) : nullptr;
}

TEST(LogTailTest, FollowerSeesEveryRecordAcrossRotations) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  LogWriterOptions o;
  o.sync = LogSync::kNone;
  o.segment_bytes = 2048;
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  auto follower = Follow(log);
  ASSERT_TRUE(follower);
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const uint64_t total = 5000;
  std::thread writer([&, seed] {
    std::mt19937_64 rng(seed);
    uint64_t done = 0;
    while (done < total) {
      const size_t n = std::min<uint64_t>(1 + rng() % 40, total - done);
      if (!(*w)->Append(Records(done, n)).ok()) return;
      done += n;
      if (rng() % 8 == 0) std::this_thread::sleep_for(1ms);
    }
  });
  uint64_t seen = 0;
  LogRecord r;
  while (seen < total) {
    auto got = follower->NextWithin(&r, 10s, 1ms);
    ASSERT_OK(got);
    if (!*got) break;
    ++seen;
    ASSERT_EQ(r.sequence, seen);
    ASSERT_EQ(r.index, seen - 1);
    ASSERT_EQ(r.new_raw, (seen - 1) * 7);
  }
  writer.join();
  EXPECT_EQ(seen, total);
  EXPECT_GT(ListLogSegments(log)->size(), 50u);
  EXPECT_TRUE(follower->damage().empty()) << follower->damage().front().ToString();
  auto more = follower->NextWithin(&r, 20ms);
  ASSERT_OK(more);
  EXPECT_FALSE(*more);
}

TEST(LogTailTest, AFrameBeingWrittenIsWaitedFor) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  {
    auto w = LogWriter::Open(log, LogWriterOptions{});
    ASSERT_OK((*w)->Append(Records(0, 2)));
  }
  auto follower = Follow(log);
  LogRecord r;
  ASSERT_TRUE(Got(follower->NextWithin(&r, 1s)));
  ASSERT_TRUE(Got(follower->NextWithin(&r, 1s)));
  EXPECT_EQ(r.sequence, 2u);

  // The next frame arrives in pieces, as a concurrent reader may see a write.
  auto recs = Records(2, 3);
  for (size_t k = 0; k < recs.size(); ++k) recs[k].sequence = 3 + k;
  std::string frame;
  AppendLogFrame(recs, &frame);
  const std::string path = ListLogSegments(log)->back().path;
  const std::string before = ReadFileBytes(path);
  for (size_t piece : {size_t{5}, size_t{16}, size_t{17}, frame.size() - 1}) {
    WriteFileBytes(path, before + frame.substr(0, piece));
    auto got = follower->Next(&r);
    ASSERT_OK(got);
    EXPECT_FALSE(*got) << "piece " << piece;
  }
  WriteFileBytes(path, before + frame);
  for (uint64_t s = 3; s <= 5; ++s) {
    auto got = follower->Next(&r);
    ASSERT_OK(got);
    ASSERT_TRUE(*got);
    EXPECT_EQ(r.sequence, s);
  }
  EXPECT_TRUE(follower->damage().empty());
}

TEST(LogTailTest, ATornTailCutByTheNextWriterIsNotReported) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  {
    auto w = LogWriter::Open(log, LogWriterOptions{});
    ASSERT_OK((*w)->Append(Records(0, 3)));
  }
  auto follower = Follow(log);
  LogRecord r;
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(Got(follower->NextWithin(&r, 1s)));
  // A writer crashed mid-frame.
  const std::string path = ListLogSegments(log)->back().path;
  WriteFileBytes(path, ReadFileBytes(path) + std::string(30, '\x5A'));
  auto got = follower->Next(&r);
  ASSERT_OK(got);
  EXPECT_FALSE(*got);
  // The next writer cuts it and goes on.
  auto w = LogWriter::Open(log, LogWriterOptions{});
  ASSERT_OK(w);
  EXPECT_EQ((*w)->recovery().bytes_cut, 30u);
  ASSERT_OK((*w)->Append(Records(3, 1)));
  got = follower->NextWithin(&r, 1s);
  ASSERT_OK(got);
  ASSERT_TRUE(*got);
  EXPECT_EQ(r.sequence, 4u);
  EXPECT_TRUE(follower->damage().empty());
}

TEST(LogTailTest, ATornTailBeforeARotationIsReported) {
  // A segment that a newer one follows gets no more frames: its bad tail is damage.
  ScratchDir dir;
  const std::string log = dir.File("log");
  LogWriterOptions o;
  o.segment_bytes = 64 + 2 * 56;
  {
    auto w = LogWriter::Open(log, o);
    for (uint64_t k = 0; k < 2; ++k) ASSERT_OK((*w)->Append(Records(k, 1)));
  }
  auto follower = Follow(log);
  LogRecord r;
  for (int k = 0; k < 2; ++k) ASSERT_TRUE(Got(follower->NextWithin(&r, 1s)));
  const std::string first = ListLogSegments(log)->back().path;
  // Lost in a machine crash: the old segment's tail is garbage, the new one is fine.
  {
    auto w = LogWriter::Open(log, o);
    ASSERT_OK((*w)->Append(Records(2, 1)));  // rotates: segment 3
  }
  WriteFileBytes(first, ReadFileBytes(first) + std::string(10, '\x01'));
  auto got = follower->NextWithin(&r, 1s);
  ASSERT_OK(got);
  ASSERT_TRUE(*got);
  EXPECT_EQ(r.sequence, 3u);
  ASSERT_EQ(follower->damage().size(), 1u);
  EXPECT_EQ(follower->damage()[0].kind, LogDamage::Kind::kTornTail);
  EXPECT_EQ(follower->damage()[0].records_lost.value_or(99), 0u);
}

TEST(LogTailTest, FollowFromASequenceAndThroughDroppedSegments) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  LogWriterOptions o;
  o.segment_bytes = 1024;
  auto w = LogWriter::Open(log, o);
  for (int k = 0; k < 20; ++k) ASSERT_OK((*w)->Append(Records(5 * k, 5)));
  auto follower = Follow(log, 42);
  LogRecord r;
  ASSERT_TRUE(Got(follower->NextWithin(&r, 1s)));
  EXPECT_EQ(r.sequence, 42u);
  ASSERT_OK((*w)->DropSegmentsBefore(80));
  for (uint64_t s = 43; s <= 100; ++s) {
    auto got = follower->NextWithin(&r, 1s);
    ASSERT_OK(got) << s;
    ASSERT_TRUE(*got) << s;
    if (r.sequence != s) {
      // The segments behind the follower's are gone: a reported gap, then on.
      ASSERT_FALSE(follower->damage().empty());
      EXPECT_EQ(follower->damage().back().kind, LogDamage::Kind::kMissingRecords);
      s = r.sequence;
    }
  }
  EXPECT_EQ(r.sequence, 100u);
}

}  // namespace
}  // namespace momenta
