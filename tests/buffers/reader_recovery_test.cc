// Readers and dead writers: a reader takes no lock and writes
// nothing; a reader never waits on a writer that is not alive; a rebuilt
// buffer records the log position it reflects; every full pass says why; a
// killed build's scratch file is removed by the next writer.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <random>
#include <thread>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/writer_lock.h"
#include "storage/log/log_format.h"
#include "storage/log/log_segments.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 4096;

BufferedArrayOptions Options(bool writable) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.tree.leaf_span = 64;
  o.tree.fanout = 4;
  o.tree.ram_budget = 1024;
  return o;
}

std::string MakeArray(const testing::ScratchDir& dir, const std::string& name = "a.npy") {
  const std::string path = dir.File(name);
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  EXPECT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
  return path;
}

double SumOf(BufferedArray& ba) {
  auto s = ba.Summarize(0, ba.length(), false);
  EXPECT_OK(s);
  return s.ok() ? static_cast<double>(s->index.moment(0)) : -1;
}

// Every file under `dir` with its bytes and modification time.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    struct stat st;
    ::stat(e.path().c_str(), &st);
    std::string v = std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":";
    if (e.is_regular_file()) v += testing::ReadFileBytes(e.path());
    out[e.path().string()] = v;
  }
  return out;
}

// Runs f() with a bound: a hang fails the test instead of hanging the suite.
template <typename F>
auto Bounded(F f, std::chrono::seconds limit) {
  auto future = std::async(std::launch::async, f);
  if (future.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "did not finish within " << limit.count() << " s";
    std::fflush(nullptr);
    std::_Exit(1);  // the stuck thread cannot be joined
  }
  return future.get();
}

TEST(ReaderRecoveryTest, ReadersTakeNoLockAndWriteNothing) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  {
    auto w = BufferedArray::Open(path, Options(true));
    ASSERT_OK(w);
    std::vector<Value> v = {Value::Float(1), Value::Float(2)};
    ASSERT_OK((*w)->Write(10, v));
    ASSERT_OK((*w)->Close());
  }
  const auto before = Snapshot(SidecarPath(path));
  auto r = BufferedArray::Open(path, Options(false));
  ASSERT_OK(r);
  EXPECT_EQ(SumOf(**r), 3);
  EXPECT_EQ(Snapshot(SidecarPath(path)), before) << "a reader changed the sidecar (locks included)";
  // A writer opens (and is not refused) while the reader is open.
  auto w = BufferedArray::Open(path, Options(true));
  ASSERT_OK(w);
}

TEST(ReaderRecoveryTest, AReaderOpeningDuringOthersQueriesNeverRefusesAWriter) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  { ASSERT_OK(BufferedArray::Open(path, Options(true))); }
  std::atomic<bool> stop{false};
  std::thread readers([&] {
    while (!stop) {
      auto r = BufferedArray::Open(path, Options(false));
      if (r.ok()) (void)(*r)->Summarize(0, kLength, false);
    }
  });
  int refused = 0;
  for (int k = 0; k < 200; ++k) {
    auto w = BufferedArray::Open(path, Options(true));
    EXPECT_OK(w) << "writer " << k;
    if (!w.ok()) ++refused;
  }
  stop = true;
  readers.join();
  EXPECT_EQ(refused, 0);
}

// A writer in a child process that dies in the middle of a chunk: the
// seqlock stays odd, the state says updating, the lock goes with it.
void DieMidChunk(const std::string& path, int ready_fd, int go_fd) {
  auto w = BufferedArray::Open(path, Options(true));
  if (!w.ok()) _exit(3);
  std::vector<Value> v = {Value::Float(5)};
  if (!(*w)->Write(7, v).ok()) _exit(4);
  char c = 1;
  if (write(ready_fd, &c, 1) != 1) _exit(5);
  if (read(go_fd, &c, 1) != 1) _exit(6);
  TreeFileHeader& h = TreeOf(**w).header();
  h.state = kTreeUpdating;
  h.write_epoch |= 1;  // a chunk began and never ended
  _exit(0);            // like SIGKILL: no destructor, no cleanup
}

// A child running DieMidChunk: ready once its update is done, dead (exit 0)
// after DieNow.
class DyingWriter {
 public:
  explicit DyingWriter(const std::string& path) {
    if (pipe(ready_) != 0 || pipe(go_) != 0) return;
    pid_ = fork();
    if (pid_ == 0) DieMidChunk(path, ready_[1], go_[0]);
  }
  bool WaitReady() {
    char c;
    return pid_ > 0 && read(ready_[0], &c, 1) == 1;
  }
  bool DieNow() {
    char c = 0;
    if (write(go_[1], &c, 1) != 1) return false;
    int status = 0;
    waitpid(pid_, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

 private:
  int ready_[2] = {-1, -1}, go_[2] = {-1, -1};
  pid_t pid_ = -1;
};

TEST(ReaderRecoveryTest, AReaderOpenedBeforeTheWriterDiedDoesNotWaitForIt) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  { ASSERT_OK(BufferedArray::Open(path, Options(true))); }
  DyingWriter writer(path);
  ASSERT_TRUE(writer.WaitReady());
  auto r = BufferedArray::Open(path, Options(false));  // a live writer: synchronizes with it
  ASSERT_OK(r);
  ASSERT_TRUE(writer.DieNow());
  const double sum = Bounded([&] { return SumOf(**r); }, std::chrono::seconds(20));
  EXPECT_EQ(sum, 5);
  auto notices = (*r)->TakeNotices();
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.front().find("died"), std::string::npos) << notices.front();
  // The recovery left a clean buffer the next writer trusts as it is.
  std::vector<std::string> next;
  auto w = BufferedArray::Open(path, Options(true), &next);
  ASSERT_OK(w);
  EXPECT_TRUE(next.empty()) << next.front();
  auto report = (*w)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u);
}

TEST(ReaderRecoveryTest, AReaderAfterADeadWriterRecoversAndAnswers) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  { ASSERT_OK(BufferedArray::Open(path, Options(true))); }
  DyingWriter writer(path);
  ASSERT_TRUE(writer.WaitReady());
  ASSERT_TRUE(writer.DieNow());
  EXPECT_FALSE(WriterIsAlive(SidecarPath(path) + "/writer.lock"));
  std::vector<std::string> notices;
  auto r = Bounded([&] { return BufferedArray::Open(path, Options(false), &notices); }, std::chrono::seconds(20));
  ASSERT_OK(r);
  EXPECT_TRUE((*r)->open_report().recovered);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.front().find("stopped mid-update"), std::string::npos) << notices.front();
  EXPECT_EQ(SumOf(**r), 5);
}

// A writer killed inside one record's pass over the node levels may have
// applied it to some levels and not others (log_sequence moves after all):
// replay recomputes that record's nodes from data instead of adding it again.
TEST(ReaderRecoveryTest, ARecordAppliedToSomeLevelsIsNotAddedTwice) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  {
    // Extremes beside the cell, so that its old value is no node's min or
    // max (a shrinking extreme would have its node recomputed anyway).
    auto w = BufferedArray::Open(path, Options(true));
    ASSERT_OK(w);
    std::vector<Value> v = {Value::Float(3), Value::Float(100), Value::Float(-100)};
    ASSERT_OK((*w)->Write(7, v));
    ASSERT_OK((*w)->Close());
  }
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto w = BufferedArray::Open(path, Options(true));
    if (!w.ok()) _exit(3);
    std::vector<Value> v = {Value::Float(5)};
    if (!(*w)->Write(7, v).ok()) _exit(4);
    TreeFileHeader& h = TreeOf(**w).header();
    h.state = kTreeUpdating;
    h.write_epoch |= 1;
    h.log_sequence -= 1;  // killed before the record's last level was done
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::vector<std::string> notices;
  auto r = BufferedArray::Open(path, Options(false), &notices);
  ASSERT_OK(r);
  EXPECT_EQ(SumOf(**r), 5) << "the record was added to the nodes twice";
  auto w = BufferedArray::Open(path, Options(true));
  ASSERT_OK(w);
  auto report = (*w)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u) << (report->examples.empty() ? "" : report->examples.front());
}

// A reader that recovers for a dead writer runs the log's recovery without
// its cuts: a duplicate of the last frame followed by garbage stays byte for
// byte, each record is applied once; the next writer cuts the garbage only.
TEST(ReaderRecoveryTest, AReadersRecoveryCutsNothingFromTheLog) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  {
    auto w = BufferedArray::Open(path, Options(true));
    ASSERT_OK(w);
    std::vector<Value> v = {Value::Float(3), Value::Float(100), Value::Float(-100)};
    ASSERT_OK((*w)->Write(7, v));
    ASSERT_OK((*w)->Close());
  }
  DyingWriter writer(path);
  ASSERT_TRUE(writer.WaitReady());
  ASSERT_TRUE(writer.DieNow());
  const std::string segment = LogDirPath(path) + "/" + LogSegmentName(1);
  const std::string logged = testing::ReadFileBytes(segment);
  const size_t frame = sizeof(LogFrameHeader) + sizeof(LogRecord);  // the dying writer's one record
  ASSERT_GT(logged.size(), sizeof(LogSegmentHeader) + frame);
  const std::string garbage(29, '\x6b');
  const std::string damaged = logged + logged.substr(logged.size() - frame) + garbage;
  testing::WriteFileBytes(segment, damaged);

  std::vector<std::string> notices;
  auto r = Bounded([&] { return BufferedArray::Open(path, Options(false), &notices); }, std::chrono::seconds(20));
  ASSERT_OK(r);
  EXPECT_TRUE((*r)->open_report().recovered);
  EXPECT_EQ(SumOf(**r), 5 + 100 - 100);
  EXPECT_EQ(testing::ReadFileBytes(segment), damaged) << "a reader's recovery changed the log";
  std::string all;
  for (const std::string& n : notices) all += n + "\n";
  EXPECT_NE(all.find("out of place"), std::string::npos) << all;
  EXPECT_EQ(all.find(" cut"), std::string::npos) << all;

  auto w = BufferedArray::Open(path, Options(true));
  ASSERT_OK(w);
  EXPECT_EQ(testing::ReadFileBytes(segment), logged + logged.substr(logged.size() - frame));
  auto report = (*w)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u);
  EXPECT_EQ(SumOf(**w), 5);
}

// Damage a header check cannot see (a node's bytes) is found while
// answering: the buffer is rebuilt, with a notice, and the query answers.
TEST(ReaderRecoveryTest, ADamagedNodeFoundByAQueryIsRebuiltAndAnswered) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  uint64_t offset = 0;
  {
    auto w = BufferedArray::Open(path, Options(true));
    ASSERT_OK(w);
    std::vector<Value> v = {Value::Float(1.5), Value::Float(2.5)};
    ASSERT_OK((*w)->Write(10, v));
    offset = TreeOf(**w).NodeOffset(1, 0);
    ASSERT_OK((*w)->Close());
  }
  {
    const std::string tree = SidecarPath(path) + "/tree";
    const int fd = ::open(tree.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char byte = 0;
    ASSERT_EQ(::pread(fd, &byte, 1, static_cast<off_t>(offset + 3)), 1);
    byte ^= 0x40;
    ASSERT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(offset + 3)), 1);
    ::close(fd);
  }
  // [0, 128): two whole leaves, the damaged one first (the whole array would
  // be answered from the root alone).
  auto sum_of_two_leaves = [](BufferedArray& ba) {
    auto s = ba.Summarize(0, 128, false);
    EXPECT_OK(s);
    return s.ok() ? static_cast<double>(s->index.moment(0)) : -1;
  };
  std::vector<std::string> opened;
  auto r = BufferedArray::Open(path, Options(false), &opened);
  ASSERT_OK(r);
  EXPECT_TRUE(opened.empty()) << opened.front();
  EXPECT_EQ(sum_of_two_leaves(**r), 4);
  auto notices = (*r)->TakeNotices();
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.back().find("rebuilding"), std::string::npos) << notices.back();
  EXPECT_NE(notices.back().find("fails its check"), std::string::npos) << notices.back();
  // And a writer that finds it while answering rebuilds in place.
  uint64_t offset2 = 0;
  {
    auto w = BufferedArray::Open(path, Options(true));
    ASSERT_OK(w);
    offset2 = TreeOf(**w).NodeOffset(1, 0);
  }
  {
    const int fd = ::open((SidecarPath(path) + "/tree").c_str(), O_RDWR);
    char byte = 0x55;
    ASSERT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(offset2 + 9)), 1);
    ::close(fd);
  }
  auto w = BufferedArray::Open(path, Options(true));
  ASSERT_OK(w);
  EXPECT_EQ(sum_of_two_leaves(**w), 4);
  EXPECT_FALSE((*w)->TakeNotices().empty());
}

TEST(ReaderRecoveryTest, ARebuiltBufferDoesNotReplayTheLogAgain) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  {
    auto w = BufferedArray::Open(path, Options(true));
    ASSERT_OK(w);
    for (int k = 0; k < 50; ++k) {
      std::vector<Value> v = {Value::Float(k + 0.5)};
      ASSERT_OK((*w)->Write(k * 31, v));
    }
    ASSERT_OK((*w)->Close());
  }
  double exact = 0;
  for (int k = 0; k < 50; ++k) exact += k + 0.5;
  // Damage the buffer: the next reader rebuilds it (a writer's work).
  ASSERT_EQ(::truncate((SidecarPath(path) + "/tree").c_str(), 5000), 0);
  for (int open = 0; open < 3; ++open) {
    SCOPED_TRACE("open " + std::to_string(open));
    std::vector<std::string> notices;
    auto r = BufferedArray::Open(path, Options(false), &notices);
    ASSERT_OK(r);
    EXPECT_EQ(SumOf(**r), exact);
    EXPECT_EQ((*r)->applied_sequence(), 50u);
    if (open == 0) {
      ASSERT_FALSE(notices.empty());
      EXPECT_NE(notices.back().find("rebuilding"), std::string::npos) << notices.back();
    }
  }
  auto w = BufferedArray::Open(path, Options(true));
  ASSERT_OK(w);
  EXPECT_EQ(SumOf(**w), exact);
}

TEST(ReaderRecoveryTest, EveryFullPassSaysWhatItReadsAndWhy) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  {
    std::vector<std::string> notices;
    auto w = BufferedArray::Open(path, Options(true), &notices);
    ASSERT_OK(w);
    ASSERT_EQ(notices.size(), 1u);
    EXPECT_NE(notices[0].find("building the moment buffer"), std::string::npos) << notices[0];
    EXPECT_NE(notices[0].find("one pass over 32.0 KiB"), std::string::npos) << notices[0];
    EXPECT_TRUE((*w)->open_report().full_pass);
  }
  // A write from outside momenta (NumPy, dd): the buffer is stale.
  {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const double v = 42;
    ASSERT_EQ(::pwrite(fd, &v, 8, 4096 + 8 * 100), 8);
    ::close(fd);
  }
  auto condition = BufferedArray::Inspect(path, Options(false));
  ASSERT_OK(condition);
  EXPECT_EQ(condition->kind, BufferCondition::Kind::kRebuild);
  EXPECT_NE(condition->why.find("cannot say which elements changed"), std::string::npos) << condition->why;
  std::vector<std::string> notices;
  auto r = BufferedArray::Open(path, Options(false), &notices);
  ASSERT_OK(r);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.back().find("modified outside momenta"), std::string::npos) << notices.back();
  EXPECT_TRUE((*r)->open_report().full_pass);
  EXPECT_EQ(SumOf(**r), 42);
  // A Rebuild after an open told not to rebuild reads the data once.
  {
    const int fd = ::open(path.c_str(), O_WRONLY);
    const double v = 43;
    ASSERT_EQ(::pwrite(fd, &v, 8, 4096 + 8 * 100), 8);
    ::close(fd);
  }
  BufferedArrayOptions once = Options(true);
  once.rebuild_on_open = false;
  notices.clear();
  auto w = BufferedArray::Open(path, once, &notices);
  ASSERT_OK(w);
  EXPECT_FALSE((*w)->open_report().full_pass);
  auto stats = (*w)->Rebuild(once.tree);
  ASSERT_OK(stats);
  EXPECT_EQ(SumOf(**w), 43);
}

TEST(ReaderRecoveryTest, AKilledBuildsScratchFileIsRemovedByTheNextWriter) {
  testing::ScratchDir dir;
  const std::string path = MakeArray(dir);
  { ASSERT_OK(BufferedArray::Open(path, Options(true))); }
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string leftover = SidecarPath(path) + "/tree.new-" + std::to_string(dead);
  const std::string alive = SidecarPath(path) + "/tree.new-" + std::to_string(::getppid());
  testing::WriteFileBytes(leftover, std::string(1 << 16, 'x'));
  testing::WriteFileBytes(alive, "a live process's");
  { ASSERT_OK(BufferedArray::Open(path, Options(true))); }
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_TRUE(std::filesystem::exists(alive));
}

}  // namespace
}  // namespace momenta
