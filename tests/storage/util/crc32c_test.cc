// CRC32C: the standard check value, both implementations agreeing on random
// buffers (all lengths and alignments up to 300 bytes), and Extend composing.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "storage/util/crc32c.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(Crc32cTest, StandardCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(Crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(Crc32cExtendPortable(0, check.data(), check.size()), 0xE3069283u);
  if (Crc32cHardwareAvailable()) {
    EXPECT_EQ(Crc32cExtendHardware(0, check.data(), check.size()), 0xE3069283u);
  }
  EXPECT_EQ(Crc32c("", 0), 0u);
  // RFC 3720 B.4: 32 bytes of zeros, of 0xFF.
  const std::string zeros(32, '\0'), ones(32, '\xFF');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(Crc32cTest, ImplementationsAgreeAndExtendComposes) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with MOMENTA_SEED)");
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> buf(4096 + 16);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  if (!Crc32cHardwareAvailable()) std::printf("CRC32C: no SSE4.2 here, table only\n");
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n = 0; n <= 300; ++n) {
      const unsigned char* p = buf.data() + align;
      const uint32_t want = Crc32cExtendPortable(0, p, n);
      if (Crc32cHardwareAvailable()) {
        ASSERT_EQ(Crc32cExtendHardware(0, p, n), want) << n;
      }
      const size_t cut = n == 0 ? 0 : rng() % (n + 1);
      ASSERT_EQ(Crc32cExtend(Crc32c(p, cut), p + cut, n - cut), want) << n << " cut " << cut;
    }
  }
  EXPECT_EQ(Crc32c(buf.data(), 4096), Crc32cExtendPortable(0, buf.data(), 4096));
}

}  // namespace
}  // namespace momenta
