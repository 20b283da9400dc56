// Disk full and failing writes: an Append that cannot be stored fails with a
// one-line error naming the segment, leaves the log as it was (no half frame,
// no sequence number used), and the log reopens with every earlier record.
// On a real 1 MiB tmpfs (skipped where mount(2) is refused), with injected
// ENOSPC, with a genuinely short write (RLIMIT_FSIZE), and with failing syncs.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::ScratchDir;
using testing::TmpfsMount;

std::vector<LogRecord> Records(uint64_t first_index, size_t n) {
  std::vector<LogRecord> out(n);
  for (size_t k = 0; k < n; ++k) {
    out[k].index = first_index + k;
    out[k].time = 7;
    out[k].new_raw = first_index + k;
  }
  return out;
}

// Reads every record; expects sequences 1..n with index = sequence - 1 and no damage.
void ExpectLogHolds(const std::string& log, uint64_t n) {
  auto reader = LogReader::Open(log);
  ASSERT_OK(reader);
  LogRecord r;
  uint64_t seen = 0;
  for (;;) {
    auto got = (*reader)->Next(&r);
    ASSERT_OK(got);
    if (!*got) break;
    ++seen;
    ASSERT_EQ(r.sequence, seen);
    ASSERT_EQ(r.index, seen - 1);
  }
  EXPECT_EQ(seen, n);
  EXPECT_TRUE((*reader)->damage().empty()) << (*reader)->damage().front().ToString();
}

uint64_t FileSizeOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

TEST(LogDiskFullTest, RealDiskFullOnATinyTmpfs) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  TmpfsMount tmpfs(mnt);
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 1 MiB tmpfs (" << tmpfs.error() << ")";
  const std::string log = mnt + "/a.npy.momenta/log";
  for (LogSync sync : {LogSync::kAlways, LogSync::kBatch}) {
    SCOPED_TRACE(std::string(LogSyncName(sync)));
    if (sync == LogSync::kBatch) {
      // Start again on an empty file system.
      std::error_code ec;
      std::filesystem::remove_all(mnt + "/a.npy.momenta", ec);
    }
    LogWriterOptions o;
    o.sync = sync;
    o.segment_bytes = 100 << 10;  // rotations on the way, so creating a segment can fail too
    auto w = LogWriter::Open(log, o);
    ASSERT_OK(w);
    uint64_t acked = 0;
    Status failed;
    for (int k = 0; k < 1000 && failed.ok(); ++k) {
      auto first = (*w)->Append(Records(acked, 500));  // 20 KB frames
      if (!first.ok()) {
        failed = first.status();
        break;
      }
      ASSERT_EQ(*first, acked + 1);
      acked += 500;
      ASSERT_OK((*w)->Commit());
    }
    ASSERT_FALSE(failed.ok()) << "1 MiB never filled up";
    const std::string msg = failed.ToString();
    EXPECT_EQ(msg.rfind("IO error: " + log + "/", 0), 0u) << msg;
    EXPECT_TRUE(msg.ends_with(".log: No space left on device")) << msg;
    EXPECT_EQ((*w)->next_sequence(), acked + 1);
    EXPECT_GT(acked, 10000u);
    // The writer stays usable: a frame that fits still goes in... or fails the same way.
    // The writer is not stopped: a smaller frame may still fit, or fail the same way.
    auto small = (*w)->Append(Records(acked, 1));
    if (small.ok()) {
      acked += 1;
    } else {
      EXPECT_TRUE(small.status().ToString().ends_with(": No space left on device"));
    }
    w->reset();
    ExpectLogHolds(log, acked);
    auto again = LogWriter::Open(log, o);
    ASSERT_OK(again);
    EXPECT_TRUE((*again)->recovery().damage.empty());
    EXPECT_EQ((*again)->next_sequence(), acked + 1);
  }
}

TEST(LogDiskFullTest, InjectedNoSpaceLeavesTheLogAsItWas) {
  ScratchDir dir;
  const std::string log = dir.File("log");
  bool full = false;
  LogWriterOptions o;
  o.sync = LogSync::kAlways;
  o.segment_bytes = 4096;
  o.fault = [&](LogFileOp op, const std::string& path) {
    if (full && (op == LogFileOp::kReserve || op == LogFileOp::kCreate)) return Status::FromErrno(path, ENOSPC);
    return Status::OK();
  };
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  uint64_t acked = 0;
  int refusals = 0;
  // Until the first frame that needs more blocks (reserved 4 KiB at a time here).
  for (int k = 0; k < 200; ++k) {
    auto first = (*w)->Append(Records(acked, 30));
    ASSERT_OK(first);
    ASSERT_EQ(*first, acked + 1);
    acked += 30;
    full = true;
    auto segments = ListLogSegments(log);
    const std::string newest = segments->back().path;
    const uint64_t size = FileSizeOf(newest);
    auto r = (*w)->Append(Records(acked, 30));
    if (r.ok()) {  // fitted in what was reserved before
      full = false;
      acked += 30;
      continue;
    }
    ++refusals;
    EXPECT_TRUE(r.status().ToString().ends_with(": No space left on device"));
    EXPECT_EQ(FileSizeOf(newest), size);
    EXPECT_EQ(ListLogSegments(log)->size(), segments->size());  // no empty segment left
    EXPECT_EQ((*w)->next_sequence(), acked + 1);
    full = false;
  }
  EXPECT_GT(refusals, 50);
  w->reset();
  ExpectLogHolds(log, acked);
}

TEST(LogDiskFullTest, AfterReserveTheUnitsAppendsCannotRunOutOfSpace) {
  // Reserve(records, appends) takes the blocks (and the rotation) up front:
  // then a disk that is full for every later reservation or new segment still
  // takes all of the unit, in one segment, and refuses only what comes after.
  ScratchDir dir;
  const std::string log = dir.File("log");
  bool full = false;
  LogWriterOptions o;
  o.sync = LogSync::kBatch;
  o.segment_bytes = 4096;  // the unit (10 frames of 30: 12,160 bytes) is larger
  o.fault = [&](LogFileOp op, const std::string& path) {
    if (full && (op == LogFileOp::kReserve || op == LogFileOp::kCreate)) return Status::FromErrno(path, ENOSPC);
    return Status::OK();
  };
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  ASSERT_OK((*w)->Append(Records(0, 60)));  // most of the first segment
  full = true;
  EXPECT_TRUE((*w)->Reserve(300, 10).ToString().ends_with(": No space left on device"));
  EXPECT_EQ(ListLogSegments(log)->size(), 1u);
  full = false;
  ASSERT_OK((*w)->Reserve(300, 10));
  full = true;
  for (int k = 0; k < 10; ++k) {
    auto first = (*w)->Append(Records(60 + 30 * k, 30));
    ASSERT_OK(first) << "append " << k << " of the reserved unit: " << first.status().ToString();
    EXPECT_EQ(*first, 61u + 30 * k);
  }
  EXPECT_EQ(ListLogSegments(log)->size(), 2u);  // rotated once, at Reserve
  ASSERT_OK((*w)->Commit());
  EXPECT_TRUE((*w)->Append(Records(360, 30)).status().ToString().ends_with(": No space left on device"));
  w->reset();
  ExpectLogHolds(log, 360);
}

TEST(LogDiskFullTest, AShortWriteIsTakenBack) {
  // RLIMIT_FSIZE makes the kernel store part of the frame and then refuse
  // (EFBIG): a real torn write, which the writer must truncate away.
  ScratchDir dir;
  const std::string log = dir.File("log");
  LogWriterOptions o;
  o.sync = LogSync::kBatch;
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  ASSERT_OK((*w)->Append(Records(0, 10)));  // also reserves blocks ahead
  const std::string segment = ListLogSegments(log)->back().path;
  const uint64_t size = FileSizeOf(segment);

  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = size + 100;  // the next frame (16 + 400 bytes) crosses it
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  auto r = (*w)->Append(Records(10, 10));
  const uint64_t size_after = FileSizeOf(segment);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(r.status().ToString(), "IO error: " + segment + ": File too large");
  EXPECT_EQ(size_after, size);
  auto retried = (*w)->Append(Records(10, 10));
  ASSERT_OK(retried);
  EXPECT_EQ(*retried, 11u);
  ASSERT_OK((*w)->Commit());
  w->reset();
  ExpectLogHolds(log, 20);
}

TEST(LogDiskFullTest, AFailedSyncStopsTheWriter) {
  for (LogSync sync : {LogSync::kAlways, LogSync::kBatch}) {
    SCOPED_TRACE(std::string(LogSyncName(sync)));
    ScratchDir dir;
    const std::string log = dir.File("log");
    bool fail = false;
    LogWriterOptions o;
    o.sync = sync;
    o.fault = [&](LogFileOp op, const std::string& path) {
      if (fail && op == LogFileOp::kSync) return Status::FromErrno(path, EIO);
      return Status::OK();
    };
    auto w = LogWriter::Open(log, o);
    ASSERT_OK(w);
    ASSERT_OK((*w)->Append(Records(0, 5)));
    ASSERT_OK((*w)->Commit());
    fail = true;
    const std::string segment = ListLogSegments(log)->back().path;
    const std::string eio = "IO error: " + segment + ": Input/output error";
    if (sync == LogSync::kAlways) {
      EXPECT_EQ((*w)->Append(Records(5, 5)).status().ToString(), eio);
      EXPECT_EQ(FileSizeOf(segment), 64u + 16 + 200);  // the unsynced frame was cut
    } else {
      ASSERT_OK((*w)->Append(Records(5, 5)));
      EXPECT_EQ((*w)->Commit().ToString(), eio);
    }
    fail = false;
    EXPECT_EQ((*w)->Append(Records(10, 1)).status().ToString(), eio);  // stopped
    EXPECT_EQ((*w)->Commit().ToString(), eio);
    w->reset();
    ExpectLogHolds(log, sync == LogSync::kAlways ? 5 : 10);
    auto again = LogWriter::Open(log, o);
    ASSERT_OK(again);
    EXPECT_OK((*again)->Append(Records(sync == LogSync::kAlways ? 5 : 10, 1)));
  }
}

}  // namespace
}  // namespace momenta
