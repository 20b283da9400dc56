// The test helpers themselves: RunCommand survives a child that exits
// without reading its input; ASSERT_OK prints the failed Status's message.
#include "tests/test_util.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/assert_ok.h"

#include <string>

namespace momenta::testing {
namespace {

TEST(TestUtilRunCommandTest, AChildThatIgnoresItsInputFailsNothing) {
  // Larger than a pipe's buffer: the writer is still writing when the child exits.
  const CommandResult r = RunCommand({"/bin/sh", "-c", "exit 3"}, std::string(4 << 20, 'x'));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
}

TEST(TestUtilRunCommandTest, InputReachesTheChild) {
  const CommandResult r = RunCommand({"/bin/sh", "-c", "wc -c"}, std::string(100000, 'x'));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::stoi(r.out), 100000);
}

TEST(TestUtilAssertOkTest, AFailedStatusPrintsTheExpressionAndItsMessage) {
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(Status::NotFound("data.npy", "no such file")),
                          "Status::NotFound(\"data.npy\", \"no such file\"): ");
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(Status::NotFound("data.npy", "no such file")), "data.npy: no such file");
  const Result<int> r = Status::Corruption("tree", "bad check");
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(r), "r: ");
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(r), "tree: bad check");
}

TEST(TestUtilAssertOkTest, AnOkStatusOrResultPasses) {
  ASSERT_OK(Status::OK());
  const Result<int> r = 7;
  ASSERT_OK(r);
  EXPECT_EQ(r.value(), 7);
}

}  // namespace
}  // namespace momenta::testing
