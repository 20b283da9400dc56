// The cancellation seam (storage/util/cancel.h): a request names its signal in
// the Interrupted status, and a buffer rebuild that sees one stops, keeps the
// buffer it had and leaves no new tree file behind.
#include "storage/util/cancel.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

// Clears the process-wide flag whatever the test does.
struct CancelReset {
  CancelReset() { ResetCancel(); }
  ~CancelReset() { ResetCancel(); }
};

TEST(CancelTest, RequestNamesTheSignalAndTheFirstOneWins) {
  CancelReset reset;
  EXPECT_FALSE(CancelRequested());
  EXPECT_OK(CheckCancel("a.npy"));
  RequestCancel(SIGTERM);
  RequestCancel(SIGINT);
  EXPECT_TRUE(CancelRequested());
  EXPECT_EQ(CancelSignal(), SIGTERM);
  const Status s = CheckCancel("a.npy");
  EXPECT_EQ(s.code(), Status::Code::kInterrupted);
  EXPECT_EQ(s.ToString(), "Interrupted: a.npy: by SIGTERM");
  ResetCancel();
  RequestCancel();
  EXPECT_EQ(CancelSignal(), 0);
  EXPECT_EQ(CheckCancel("b").ToString(), "Interrupted: b: cancelled");
}

TEST(CancelTest, RebuildStopsAndKeepsTheBufferItHad) {
  CancelReset reset;
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {100000};
  {
    auto f = ArrayFile::Create(path, DType::kF8, shape, io);
    ASSERT_OK(f);
    std::vector<Value> v(100000, Value::Float(2.0));
    ASSERT_OK((*f)->WriteValues(0, v));
  }
  BufferedArrayOptions options;
  options.io.writable = true;
  auto ba = BufferedArray::Open(path, options);
  ASSERT_OK(ba);
  RequestCancel(SIGINT);
  TreeOptions other;
  other.order = 4;
  auto stats = (*ba)->Rebuild(other);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().ToString(), "Interrupted: " + path + ": by SIGINT");
  ResetCancel();
  for (const auto& e : std::filesystem::directory_iterator(path + ".momenta"))
    EXPECT_EQ(e.path().filename().string().find(".new-"), std::string::npos) << e.path();
  EXPECT_EQ(TreeOf(**ba).order(), 2);
  auto s = (*ba)->Summarize(0, 100000, false);
  ASSERT_OK(s);
  EXPECT_EQ(static_cast<double>(Sum(s->index)), 200000.0);
  // Without a request the same rebuild goes through.
  ASSERT_OK((*ba)->Rebuild(other));
  EXPECT_EQ(TreeOf(**ba).order(), 4);
}

}  // namespace
}  // namespace momenta
