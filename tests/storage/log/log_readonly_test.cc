// Readers never change the log: a read-only pass (LogReader, `momenta log`)
// over a log folder with every kind of damage leaves every file name and
// every byte as it was, reports each loss with its sequences, and works the
// same on a read-only copy (a tmpfs remounted read-only, so that even root
// cannot write; skipped where mount(2) is refused).
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "storage/array/array_file.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

namespace fs = std::filesystem;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;
using testing::TmpfsMount;
using testing::WriteFileBytes;

constexpr uint64_t kHeader = sizeof(LogSegmentHeader);

// Every file under `dir`: relative name -> (mode, bytes).
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st;
    EXPECT_EQ(::lstat(e.path().c_str(), &st), 0);
    const std::string name = fs::relative(e.path(), dir).string();
    out[name] = std::to_string(st.st_mode) + ":" + std::to_string(st.st_size) + ":" +
                (e.is_regular_file() ? ReadFileBytes(e.path().string()) : std::string());
  }
  return out;
}

// An i8 array of 100 elements with a log of 5 segments of 4 one-record
// frames (sequences 1..20), then damaged: segment 5 removed, segment 9 cut
// mid-frame, a byte of segment 13 flipped, the newest segment (17) torn, and
// an unpublished segment left behind.
void MakeDamagedLog(const std::string& array) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {100};
  ASSERT_OK(ArrayFile::Create(array, DType::kI8, shape, io));
  const std::string log = LogDirPath(array);
  LogWriterOptions o;
  o.dtype = DType::kI8;
  o.segment_bytes = kHeader + 4 * 56;
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  for (uint64_t s = 1; s <= 20; ++s) {
    LogRecord r;
    r.index = s;
    r.time = static_cast<int64_t>(s);
    r.new_raw = s * 10;
    ASSERT_OK((*w)->Append(std::vector<LogRecord>{r}));
  }
  ASSERT_OK((*w)->Close());
  auto seg = [&](uint64_t first) { return log + "/" + LogSegmentName(first); };
  ASSERT_EQ(ListLogSegments(log)->size(), 5u);
  ASSERT_EQ(::unlink(seg(5).c_str()), 0);
  WriteFileBytes(seg(9), ReadFileBytes(seg(9)).substr(0, kHeader + 56 + 20));
  std::string b = ReadFileBytes(seg(13));
  b[kHeader + 56 + 30] ^= 1;
  WriteFileBytes(seg(13), b);
  WriteFileBytes(seg(17), ReadFileBytes(seg(17)).substr(0, kHeader + 3 * 56 + 7));
  WriteFileBytes(seg(21) + ".tmp", "half");
}

const char* const kExpectedRecords[] = {"1 1 1 0 10",     "2 2 2 0 20",     "3 3 3 0 30",     "4 4 4 0 40",
                                        "9 9 9 0 90",     "13 13 13 0 130", "15 15 15 0 150", "16 16 16 0 160",
                                        "17 17 17 0 170", "18 18 18 0 180", "19 19 19 0 190"};

// Runs `momenta log` and checks the records and the loss notices.
void ExpectLogCommandReads(const std::string& array) {
  const auto r = RunCli({"log", array});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string want;
  for (const char* line : kExpectedRecords) want += std::string(line) + "\n";
  EXPECT_EQ(r.out, want);
  const std::string log = LogDirPath(array);
  for (const char* lost : {"4 records lost (sequences 5..8)", "3 records lost (sequences 10..12)",
                           "1 record lost (sequence 14)", "1 record lost (sequence 20)"})
    EXPECT_NE(r.err.find(lost), std::string::npos) << lost << " not reported in:\n" << r.err;
  EXPECT_NE(r.err.find(log + "/" + LogSegmentName(17) + ": torn tail of 7 bytes"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(" cut"), std::string::npos) << r.err;
}

TEST(LogReadOnlyTest, ReadersLeaveADamagedLogExactlyAsItWas) {
  ScratchDir dir;
  const std::string array = dir.File("a.npy");
  MakeDamagedLog(array);
  const std::string sidecar = SidecarPath(array);
  const auto before = Snapshot(sidecar);

  auto reader = LogReader::Open(LogDirPath(array));
  ASSERT_OK(reader);
  LogRecord rec;
  size_t n = 0;
  for (;;) {
    auto got = (*reader)->Next(&rec);
    ASSERT_OK(got);
    if (!*got) break;
    ++n;
  }
  EXPECT_EQ(n, std::size(kExpectedRecords));
  EXPECT_EQ((*reader)->damage().size(), 4u);
  EXPECT_EQ(Snapshot(sidecar), before);

  ExpectLogCommandReads(array);
  EXPECT_EQ(RunCli({"log", array, "--json", "--from", "10"}).exit_code, 0);
  EXPECT_EQ(Snapshot(sidecar), before) << "momenta log changed the log folder";
}

TEST(LogReadOnlyTest, LogCommandWorksOnAReadOnlyCopy) {
  ScratchDir dir;
  const std::string mnt = dir.File("ro");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  TmpfsMount tmpfs(mnt, "8m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (" << tmpfs.error() << ")";
  // Made here, then copied (a tmpfs with unlinked inodes pending refuses to
  // become read-only).
  const std::string original = dir.File("a.npy");
  MakeDamagedLog(original);
  fs::copy(original, mnt + "/a.npy");
  fs::copy(SidecarPath(original), SidecarPath(mnt + "/a.npy"), fs::copy_options::recursive);
  const std::string array = mnt + "/a.npy";
  // No write permission anywhere, and a file system that refuses writes even to root.
  for (const auto& e : fs::recursive_directory_iterator(mnt))
    fs::permissions(e.path(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                    fs::perm_options::remove);
  const auto before = Snapshot(mnt);
  if (::mount(nullptr, mnt.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0)
    GTEST_SKIP() << "cannot remount read-only (" << std::strerror(errno) << ")";
  ASSERT_NE(::access(mnt.c_str(), W_OK), 0);
  ExpectLogCommandReads(array);
  EXPECT_EQ(Snapshot(mnt), before);
}

}  // namespace
}  // namespace momenta
