// One writer per array and per log: a second writer, in another process or in
// this one, is refused with the holder's pid; a holder that dies leaves no
// stale lock. Readers take no lock.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "storage/array/writer_lock.h"
#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"
#include "storage/log/log_writer.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

// Runs `body` in a forked child and returns what it wrote to its pipe.
std::string InChild(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const std::string out = body();
    if (::write(fds[1], out.data(), out.size()) < 0) _exit(2);
    _exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

std::string TryLock(const std::string& array) {
  auto lock = LockArrayForWriting(array);
  return lock.ok() ? "acquired" : lock.status().ToString();
}

TEST(WriterLockTest, SecondWriterInAnotherProcessGetsThePid) {
  ScratchDir dir;
  const std::string array = dir.File("data.npy");
  auto lock = LockArrayForWriting(array);
  ASSERT_OK(lock);
  EXPECT_EQ(InChild([&] { return TryLock(array); }),
            "IO error: " + array + ": locked by another writer (pid " + std::to_string(::getpid()) + ")");
  // Also within this process: flock conflicts between open file descriptions.
  EXPECT_EQ(TryLock(array),
            "IO error: " + array + ": locked by another writer (pid " + std::to_string(::getpid()) + ")");
  lock->reset();
  EXPECT_EQ(InChild([&] { return TryLock(array); }), "acquired");
}

TEST(WriterLockTest, AHolderThatDiesLeavesNoStaleLock) {
  ScratchDir dir;
  const std::string array = dir.File("data.npy");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    auto lock = LockArrayForWriting(array);
    const char c = lock.ok() ? 'y' : 'n';
    if (::write(ready[1], &c, 1) < 0) _exit(2);
    for (;;) ::pause();  // killed below
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(c, 'y');
  EXPECT_EQ(TryLock(array), "IO error: " + array + ": locked by another writer (pid " + std::to_string(child) + ")");
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(TryLock(array), "acquired");
}

TEST(WriterLockTest, OneLogWriterAtATimeReadersFree) {
  ScratchDir dir;
  const std::string log = dir.File("data.npy.momenta/log");
  LogWriterOptions o;
  auto w = LogWriter::Open(log, o);
  ASSERT_OK(w);
  LogRecord r;
  r.index = 3;
  ASSERT_OK((*w)->Append({&r, 1}));
  const std::string child = InChild([&] {
    auto second = LogWriter::Open(log, LogWriterOptions{});
    return second.ok() ? std::string("opened") : second.status().ToString();
  });
  EXPECT_EQ(child, "IO error: " + log + ": locked by another writer (pid " + std::to_string(::getpid()) + ")");
  // A reader needs no lock, and sees the record the writer handed to the kernel.
  auto reader = LogReader::Open(log);
  ASSERT_OK(reader);
  LogRecord got;
  auto next = (*reader)->Next(&got);
  ASSERT_OK(next);
  ASSERT_TRUE(*next);
  EXPECT_EQ(got.index, 3u);
  ASSERT_OK((*w)->Close());
  EXPECT_EQ(InChild([&] {
              auto second = LogWriter::Open(log, LogWriterOptions{});
              return second.ok() ? std::string("opened") : second.status().ToString();
            }),
            "opened");
}

}  // namespace
}  // namespace momenta
