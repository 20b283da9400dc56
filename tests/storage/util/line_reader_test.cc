// storage/util/line_reader.h: the one line reader, in both of its ways of
// waiting (Next with a wait, for the monitor's loops; the blocking Next,
// Ready and WaitReady, for the CLI's commands that answer each line), and a
// stop (a token of its own, or the process's request) waking a blocked wait.
#include "storage/util/line_reader.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "storage/util/cancel.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using std::chrono::milliseconds;
using testing::ScratchDir;
using testing::WriteFileBytes;

// What Next(&line, wait) got; a failure fails the test.
LineReader::Got GotOf(Result<LineReader::Got> got) {
  EXPECT_OK(got);
  return got.ok() ? *got : LineReader::Got::kEnd;
}

// A pipe whose ends close with the test.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0); }
  ~Pipe() {
    if (fds[1] >= 0) ::close(fds[1]);
  }
  void Write(const std::string& s) { ASSERT_EQ(::write(fds[1], s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  void CloseWriter() {
    ::close(fds[1]);
    fds[1] = -1;
  }
};

TEST(LineReaderTest, FileLinesWithAndWithoutTheLastNewline) {
  ScratchDir dir;
  WriteFileBytes(dir.File("in.txt"), "a b\n\nlast");
  auto in = LineReader::Open(dir.File("in.txt"), StopToken());
  ASSERT_OK(in);
  EXPECT_TRUE((*in)->Ready());
  std::string_view line;
  auto got = (*in)->Next(&line, milliseconds(-1));
  ASSERT_OK(got);
  EXPECT_EQ(*got, LineReader::Got::kLine);
  EXPECT_EQ(line, "a b");
  auto second = (*in)->Next();  // the blocking way, on the same buffer
  ASSERT_OK(second);
  EXPECT_EQ(**second, "");
  auto third = (*in)->Next();
  ASSERT_OK(third);
  EXPECT_EQ(**third, "last");
  EXPECT_EQ((*in)->where(), dir.File("in.txt") + ":3");
  auto end = (*in)->Next();
  ASSERT_OK(end);
  EXPECT_FALSE(end->has_value());
  EXPECT_TRUE((*in)->finished());
  EXPECT_EQ(GotOf((*in)->Next(&line, milliseconds(-1))), LineReader::Got::kEnd);
}

TEST(LineReaderTest, OpenRefusesAFolderAndAMissingFile) {
  ScratchDir dir;
  EXPECT_EQ(LineReader::Open(dir.path(), StopToken()).status().code(), Status::Code::kIOError);
  EXPECT_EQ(LineReader::Open(dir.File("none"), StopToken()).status().code(), Status::Code::kIOError);
  auto in = LineReader::Open("-", StopToken());
  ASSERT_OK(in);
  EXPECT_EQ((*in)->name(), "stdin");
}

TEST(LineReaderTest, PipeWaitsForAWholeLine) {
  Pipe p;
  LineReader in(p.fds[0], "pipe", StopToken());
  std::string_view line;
  p.Write("par");
  EXPECT_EQ(GotOf(in.Next(&line, milliseconds(20))), LineReader::Got::kNothing);
  auto ready = in.WaitReady(20);
  ASSERT_OK(ready);
  EXPECT_FALSE(*ready);  // bytes, but no whole line
  p.Write("t\nnext");
  ready = in.WaitReady(1000);
  ASSERT_OK(ready);
  EXPECT_TRUE(*ready);
  EXPECT_EQ(GotOf(in.Next(&line, milliseconds(0))), LineReader::Got::kLine);
  EXPECT_EQ(line, "part");
  p.CloseWriter();
  auto last = in.Next();
  ASSERT_OK(last);
  EXPECT_EQ(**last, "next");
  EXPECT_EQ(in.line_number(), 2u);
}

TEST(LineReaderTest, AStopWakesABlockedWait) {
  std::atomic<int> flag{0};
  Pipe wake;
  Pipe p;
  LineReader in(p.fds[0], "pipe", StopToken(&flag, wake.fds[0]));
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    flag = 1;
    wake.Write("x");
  });
  const auto start = std::chrono::steady_clock::now();
  std::string_view line;
  EXPECT_EQ(GotOf(in.Next(&line, milliseconds(-1))), LineReader::Got::kNothing);
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(in.Next().status().ToString(), "Interrupted: pipe: stopped");
  EXPECT_EQ(in.WaitReady(1000).status().ToString(), "Interrupted: pipe: stopped");
}

// The process's request (what the CLI's signal handler calls) wakes a reader
// holding StopToken::Cancel(), and the status names the signal.
TEST(LineReaderTest, TheProcessRequestWakesACancelToken) {
  ResetCancel();
  OpenCancelWake();
  ASSERT_GE(CancelFd(), 0);
  Pipe p;
  LineReader in(p.fds[0], "stdin", StopToken::Cancel());
  std::thread stopper([] {
    std::this_thread::sleep_for(milliseconds(50));
    RequestCancel(SIGTERM);
  });
  auto line = in.Next();
  stopper.join();
  EXPECT_EQ(line.status().ToString(), "Interrupted: stdin: by SIGTERM");
  ResetCancel();  // drains the wake descriptor too
  EXPECT_FALSE(StopToken::Cancel().requested());
  EXPECT_TRUE(StopToken::Cancel().SleepUnlessStopped(milliseconds(1)));
}

}  // namespace
}  // namespace momenta
