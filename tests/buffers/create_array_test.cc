// buffers/create_array.h: a create makes the array and its buffer, or leaves
// nothing behind (the array file it made, and the sidecar unless one was
// there before), so a retry does not meet "File exists".
#include "buffers/create_array.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;
namespace fs = std::filesystem;

TEST(CreateArrayTest, MakesAnAllZeroArrayWithItsBuffer) {
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  std::vector<std::string> notices;
  const uint64_t shape[] = {3, 1000};
  auto ba = CreateBufferedArray(path, DType::kI8, shape, BufferedArrayOptions{}, &notices);
  ASSERT_OK(ba);
  EXPECT_TRUE((*ba)->writable());
  EXPECT_EQ((*ba)->length(), 3000u);
  EXPECT_TRUE(fs::is_directory(path + ".momenta"));
  // A second create of the same path is refused and leaves the first alone.
  auto again = CreateBufferedArray(path, DType::kI8, shape, BufferedArrayOptions{}, &notices);
  EXPECT_FALSE(again.ok());
  EXPECT_TRUE(fs::exists(path));
  EXPECT_TRUE(fs::is_directory(path + ".momenta"));
}

TEST(CreateArrayTest, AFailedBufferRemovesTheArrayAndTheSidecarItMade) {
  ScratchDir dir;
  const std::string path = dir.File("b.npy");
  BufferedArrayOptions options;
  // The sidecar inside a folder that is a file: the array is made, its buffer cannot be.
  testing::WriteFileBytes(dir.File("plain"), "x");
  options.sidecar = dir.File("plain") + "/side";
  const uint64_t shape[] = {100};
  std::vector<std::string> notices;
  auto ba = CreateBufferedArray(path, DType::kF8, shape, options, &notices);
  ASSERT_FALSE(ba.ok());
  EXPECT_FALSE(fs::exists(path)) << ba.status().ToString();
  // A retry with a usable sidecar succeeds: nothing was left in the way.
  options.sidecar = dir.File("side");
  ASSERT_OK(CreateBufferedArray(path, DType::kF8, shape, options, &notices));
}

TEST(CreateArrayTest, ASidecarThatWasThereBeforeIsKept) {
  ScratchDir dir;
  const std::string path = dir.File("c.npy");
  // A sidecar that is a plain file: Open fails on it, and it is not this create's to remove.
  testing::WriteFileBytes(dir.File("side"), "not a folder");
  BufferedArrayOptions options;
  options.sidecar = dir.File("side");
  const uint64_t shape[] = {100};
  std::vector<std::string> notices;
  auto ba = CreateBufferedArray(path, DType::kF8, shape, options, &notices);
  ASSERT_FALSE(ba.ok());
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_regular_file(dir.File("side")));
}

}  // namespace
}  // namespace momenta
