// No hidden full passes: every pass over the whole array says on
// stderr what it reads and why, also off a terminal; `info` says what the
// next command will do; `query --json` reports a rebuild apart from the
// query; `build` after an outside write reads the data once.
#include <gtest/gtest.h>

#include <string>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::RunCli;
using testing::ScratchDir;

bool Contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(CliFullPassTest, EveryPassOverTheArraySaysWhyAndIsReportedApart) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "needs /usr/bin/python3 with numpy";
  ScratchDir dir;
  const std::string a = dir.File("n.npy");
  // A NumPy-written array: no buffer yet.
  auto made = testing::RunPython("import numpy as np; np.save('" + a + "', np.arange(100000, dtype='f8'))");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto info = RunCli({"info", a});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_TRUE(Contains(info.out, "none yet: the next query builds it (one pass over")) << info.out;
  auto q = RunCli({"query", a, "--range", ":", "--stat", "sum", "--json"});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_TRUE(Contains(q.err, "building the moment buffer of " + a + ": it does not exist yet (one pass over"))
      << q.err;
  EXPECT_TRUE(
      Contains(q.out, "\"open\":{\"rebuilt\":true,\"rebuild_reason\":\"it does not exist yet\",\"rebuild_us\":"))
      << q.out;
  EXPECT_TRUE(Contains(q.out, "\"sum\":4999950000")) << q.out;
  // Answered from the buffer now: no pass, and the JSON says so.
  q = RunCli({"query", a, "--range", ":", "--stat", "sum", "--json"});
  EXPECT_EQ(q.err, "");
  EXPECT_TRUE(Contains(q.out, "\"open\":{\"rebuilt\":false")) << q.out;
  // One element written from outside momenta: the file system cannot say
  // which, and info says what the next command will do about it.
  auto wrote =
      testing::RunPython("import numpy as np; m = np.load('" + a + "', mmap_mode='r+'); m[5] = 1e6; m.flush()");
  ASSERT_EQ(wrote.exit_code, 0) << wrote.err;
  info = RunCli({"info", a});
  EXPECT_TRUE(Contains(info.out, "stale: the array file was modified outside momenta")) << info.out;
  EXPECT_TRUE(Contains(info.out, "cannot say which elements changed")) << info.out;
  EXPECT_TRUE(Contains(info.out, "the next command rebuilds it")) << info.out;
  // build reads the data once: the open does not rebuild before it.
  auto b = RunCli({"build", a, "--json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_FALSE(Contains(b.err, "rebuilding")) << b.err;
  EXPECT_TRUE(Contains(b.out, "\"data_bytes_read\":800000")) << b.out;
  q = RunCli({"query", a, "--range", ":", "--stat", "sum"});
  EXPECT_EQ(q.out, "sum 5000949995\n");
  EXPECT_EQ(q.err.find("rebuild"), std::string::npos) << q.err;
}

}  // namespace
}  // namespace momenta
