// `momenta log` and `momenta query` over a log segment holding valid records
// out of place (a frame written twice, two frames swapped, a duplicate at the
// tail, garbage after a duplicate): the readers change no byte, `log` prints
// every valid record once and reports each out-of-place one with its
// sequence and offset on stderr; only the next writer cuts, and only bytes
// that hold no whole frame.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/time.h>

#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "storage/log/log_format.h"
#include "storage/log/log_segments.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::CommandResult;
using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;
using testing::WriteFileBytes;

constexpr size_t kHeader = sizeof(LogSegmentHeader);

// The frames of a segment's bytes, each as its bytes (header and payload).
std::vector<std::string> SplitFrames(const std::string& segment) {
  std::vector<std::string> frames;
  size_t at = kHeader;
  while (at + sizeof(LogFrameHeader) <= segment.size()) {
    LogFrameHeader h;
    std::memcpy(&h, segment.data() + at, sizeof h);
    const size_t bytes = sizeof h + h.payload_bytes;
    frames.push_back(segment.substr(at, bytes));
    at += bytes;
  }
  EXPECT_EQ(at, segment.size());
  return frames;
}

// The sequences `momenta log` printed, in order.
std::vector<uint64_t> PrintedSequences(const std::string& out) {
  std::vector<uint64_t> seqs;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) seqs.push_back(std::stoull(line.substr(0, line.find(' '))));
  return seqs;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> v;
  for (uint64_t s = first; s <= last; ++s) v.push_back(s);
  return v;
}

struct Damage {
  const char* name;
  // The damaged segment from the frames (four of four records: 1..16).
  std::string (*make)(const std::string& header, const std::vector<std::string>& f);
  std::vector<uint64_t> printed;  // by `momenta log`, in order
  const char* report;             // on stderr: "<what> at offset <N>" for frame index `at`
  size_t at;                      // the out-of-place frame's index among the damaged frames
  size_t garbage;                 // bytes of garbage at the end (cut by the next writer)
};

const Damage kDamages[] = {
    {"duplicate",
     [](const std::string& h, const std::vector<std::string>& f) { return h + f[0] + f[1] + f[1] + f[2] + f[3]; },
     Range(1, 16), "records 5..8", 2, 0},
    {"swap",
     [](const std::string& h, const std::vector<std::string>& f) { return h + f[0] + f[2] + f[1] + f[3]; },
     {1, 2, 3, 4, 9, 10, 11, 12, 5, 6, 7, 8, 13, 14, 15, 16},
     "records 5..8",
     2,
     0},
    {"duplicate at the tail",
     [](const std::string& h, const std::vector<std::string>& f) { return h + f[0] + f[1] + f[2] + f[3] + f[3]; },
     Range(1, 16), "records 13..16", 4, 0},
    {"garbage after a duplicate",
     [](const std::string& h, const std::vector<std::string>& f) {
       return h + f[0] + f[1] + f[2] + f[3] + f[3] + std::string("\x03garbage, no frame\xff", 19);
     },
     Range(1, 16), "records 13..16", 4, 19},
};

// Moves the array's modification time, so that the next opener rebuilds its
// buffer (and, a reader, runs the writer's recovery of the log for it).
void TouchArray(const std::string& path) {
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const struct timeval times[2] = {{st.st_atime, 0}, {st.st_mtime + 7, 0}};
  ASSERT_EQ(::utimes(path.c_str(), times), 0);
}

TEST(LogCommandTest, ValidRecordsOutOfPlaceAreReportedPrintedAndNeverCut) {
  for (const Damage& kind : kDamages) {
    SCOPED_TRACE(kind.name);
    ScratchDir dir;
    const std::string a = dir.File("a.npy");
    ASSERT_EQ(RunCli({"create", a, "--length", "100", "--dtype", "i8"}).exit_code, 0);
    for (int k = 0; k < 4; ++k) {  // four frames of four records: sequences 1..16
      const std::string at = std::to_string(10 * k);
      const CommandResult set = RunCli({"set", a, at, "1", "2", "3", std::to_string(k + 4)});
      ASSERT_EQ(set.exit_code, 0) << set.err;
    }
    const std::string segment = LogDirPath(a) + "/" + LogSegmentName(1);
    const std::string clean = ReadFileBytes(segment);
    const std::vector<std::string> frames = SplitFrames(clean);
    ASSERT_EQ(frames.size(), 4u);
    const std::string damaged = kind.make(clean.substr(0, kHeader), frames);
    WriteFileBytes(segment, damaged);
    const uint64_t offset = kHeader + kind.at * frames[0].size();

    // A query, even one that has to rebuild the buffer (and so recovers the
    // log as a writer would), cuts nothing.
    const CommandResult q = RunCli({"query", a, "--range", "0:100", "--stat", "sum"});
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_EQ(ReadFileBytes(segment), damaged);
    TouchArray(a);
    const CommandResult rebuilt = RunCli({"query", a, "--range", "0:100", "--stat", "sum"});
    ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.err;
    EXPECT_EQ(rebuilt.out, q.out);
    EXPECT_EQ(ReadFileBytes(segment), damaged);

    // `momenta log` prints every valid record once, and says where the
    // out-of-place one lies.
    const CommandResult log = RunCli({"log", a});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    EXPECT_EQ(PrintedSequences(log.out), kind.printed) << log.out;
    const std::string report = std::string(kind.report) + " at offset " + std::to_string(offset) + " out of place";
    EXPECT_NE(log.err.find(report), std::string::npos) << "missing '" << report << "' in: " << log.err;
    EXPECT_EQ(ReadFileBytes(segment), damaged);

    // The next writer cuts the garbage only, and appends after the rest.
    const CommandResult set = RunCli({"set", a, "99", "5"});
    ASSERT_EQ(set.exit_code, 0) << set.err;
    const std::string kept = damaged.substr(0, damaged.size() - kind.garbage);
    EXPECT_EQ(ReadFileBytes(segment).substr(0, kept.size()), kept);
    const CommandResult again = RunCli({"log", a});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    std::vector<uint64_t> expected = kind.printed;
    expected.push_back(17);
    EXPECT_EQ(PrintedSequences(again.out), expected) << again.out;
  }
}

}  // namespace
}  // namespace momenta
