// storage/util/format_bytes.h: byte counts in binary units, exact below 1 KiB.
#include "storage/util/format_bytes.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace momenta {
namespace {

TEST(FormatBytesTest, ExactBelowAKibibyteOneDecimalAbove) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(uint64_t{17592186040320}), "16.0 TiB");  // ext4's largest file
  EXPECT_EQ(FormatBytes(uint64_t{1} << 53), "8.0 PiB");
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16.0 EiB");
}

}  // namespace
}  // namespace momenta
