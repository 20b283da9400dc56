// The test helpers themselves: RunCommand survives a child that exits
// without reading its input.
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <string>

namespace momenta::testing {
namespace {

TEST(RunCommandTest, AChildThatIgnoresItsInputFailsNothing) {
  // Larger than a pipe's buffer: the writer is still writing when the child exits.
  const CommandResult r = RunCommand({"/bin/sh", "-c", "exit 3"}, std::string(4 << 20, 'x'));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
}

TEST(RunCommandTest, InputReachesTheChild) {
  const CommandResult r = RunCommand({"/bin/sh", "-c", "wc -c"}, std::string(100000, 'x'));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::stoi(r.out), 100000);
}

}  // namespace
}  // namespace momenta::testing
