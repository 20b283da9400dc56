// A full disk fails an update before anything changes: BufferedArray::Apply
// and `momenta update` reserve the log's frames and sequence numbers, the
// buffer's node pages and the array's blocks for the whole input first, so
// array, log and buffer stay exactly as they were and the message says that
// nothing was applied. On a small real tmpfs (skipped where mount(2) is
// refused), as tests/storage/log/log_disk_full_test.cc makes a full disk.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;
using testing::TmpfsMount;

BufferedArrayOptions Options() {
  BufferedArrayOptions o;
  o.io.writable = true;
  o.io.kind = IoKind::kPread;
  return o;
}

// The log's records as "seq index new" lines.
std::string LogText(const std::string& array) {
  auto reader = LogReader::Open(LogDirPath(array));
  if (!reader.ok()) return reader.status().ToString();
  std::string out;
  LogRecord r;
  for (;;) {
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status().ToString();
    if (!*more) break;
    out += std::to_string(r.sequence) + " " + std::to_string(r.index) + " " + std::to_string(r.new_raw) + "\n";
  }
  for (const LogDamage& d : (*reader)->damage()) out += "damage: " + d.ToString() + "\n";
  return out;
}

void CreateArray(const std::string& path, uint64_t length) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {length};
  ASSERT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
}

TEST(UpdateAllOrNothingTest, ApplyOnAFullDiskChangesNothing) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  TmpfsMount tmpfs(mnt, "2m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 2 MiB tmpfs (" << tmpfs.error() << ")";
  const std::string path = mnt + "/a.npy";
  constexpr uint64_t kLength = 1 << 18;  // 2 MiB of f8, sparse
  CreateArray(path, kLength);
  {
    auto ba = BufferedArray::Open(path, Options());
    ASSERT_OK(ba);
    std::vector<IndexedValue> first;
    for (uint64_t k = 0; k < 100; ++k) first.push_back({k, Value::Float(static_cast<double>(k + 1))});
    ASSERT_OK((*ba)->Apply(first));
    ASSERT_OK((*ba)->Close());
  }
  const std::string array_before = ReadFileBytes(path);
  const std::string log_before = LogText(path);
  ASSERT_NE(log_before.find("100 99 "), std::string::npos);

  // 200,000 records into two array pages: 8 MB of log frames do not fit.
  std::vector<IndexedValue> updates;
  for (uint64_t k = 0; k < 200000; ++k) updates.push_back({k % 1000, Value::Float(static_cast<double>(k + 7))});
  auto ba = BufferedArray::Open(path, Options());
  ASSERT_OK(ba);
  const Status s = (*ba)->Apply(updates);
  ASSERT_FALSE(s.ok()) << "2 MiB did not fill up";
  EXPECT_NE(s.ToString().find(": No space left on device (nothing was applied: none of the 200000 updates "
                              "is in the array or the log)"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(ReadFileBytes(path), array_before);
  EXPECT_EQ(LogText(path), log_before);
  auto report = (*ba)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u) << report->examples.front();
  // What fits still goes in, right after the last sequence.
  ASSERT_OK((*ba)->Apply(std::vector<IndexedValue>{{5, Value::Float(-1)}}));
  EXPECT_EQ((*ba)->applied_sequence(), 101u);
  ASSERT_OK((*ba)->Close());
}

TEST(UpdateAllOrNothingTest, ApplyWhenTheArrayRunsOut) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  TmpfsMount tmpfs(mnt, "1m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 1 MiB tmpfs (" << tmpfs.error() << ")";
  const std::string path = mnt + "/a.npy";
  CreateArray(path, 1 << 18);
  {
    auto ba = BufferedArray::Open(path, Options());
    ASSERT_OK(ba);
    ASSERT_OK((*ba)->Apply(std::vector<IndexedValue>{{1, Value::Float(2)}}));
    ASSERT_OK((*ba)->Close());
  }
  const std::string array_before = ReadFileBytes(path);
  const std::string log_before = LogText(path);
  // One update in each of 512 pages: 2 MiB of array blocks, 20 KB of log.
  std::vector<IndexedValue> updates;
  for (uint64_t k = 0; k < 512; ++k) updates.push_back({k * 512 + 3, Value::Float(1.5)});
  auto ba = BufferedArray::Open(path, Options());
  ASSERT_OK(ba);
  const Status s = (*ba)->Apply(updates);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("No space left on device (nothing was applied: none of the 512 updates"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(ReadFileBytes(path), array_before);
  EXPECT_EQ(LogText(path), log_before);
  EXPECT_EQ((*ba)->applied_sequence(), 1u);
}

TEST(UpdateAllOrNothingTest, CliUpdateOnAFullDiskAppliesNothingAndSaysSo) {
  ScratchDir dir;
  const std::string mnt = dir.File("mnt");
  ASSERT_EQ(::mkdir(mnt.c_str(), 0755), 0);
  TmpfsMount tmpfs(mnt, "6m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a 6 MiB tmpfs (" << tmpfs.error() << ")";
  const std::string path = mnt + "/a.npy";
  ASSERT_EQ(RunCli({"create", path, "--length", "2^18", "--io", "pread"}).exit_code, 0);
  ASSERT_EQ(RunCli({"update", path, "--io", "pread"}, "1 10\n2 20\n").exit_code, 0);
  const std::string array_before = ReadFileBytes(path);
  const auto log_before = RunCli({"log", path});
  ASSERT_EQ(log_before.exit_code, 0);
  const auto sum_before = RunCli({"query", path, "--range", "0:262144", "--stat", "sum", "--io", "pread"});
  ASSERT_EQ(sum_before.exit_code, 0) << sum_before.err;

  // 200,000 updates over the whole array: 8 MB of log and 2 MiB of array do
  // not fit in 6 MiB (the old command applied its first batches of 65,536).
  std::string input;
  for (uint64_t k = 0; k < 200000; ++k)
    input += std::to_string((k * 7919) % (1 << 18)) + " " + std::to_string(k + 100) + "\n";
  const auto r = RunCli({"update", path, "--io", "pread"}, input);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("No space left on device (nothing was applied: none of the 200000 updates is in "
                       "the array or the log)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadFileBytes(path), array_before);
  const auto log_after = RunCli({"log", path});
  EXPECT_EQ(log_after.out, log_before.out);
  EXPECT_EQ(log_after.err, log_before.err);
  const auto sum_after = RunCli({"query", path, "--range", "0:262144", "--stat", "sum", "--io", "pread"});
  EXPECT_EQ(sum_after.exit_code, 0) << sum_after.err;
  EXPECT_EQ(sum_after.out, sum_before.out);
}

}  // namespace
}  // namespace momenta
