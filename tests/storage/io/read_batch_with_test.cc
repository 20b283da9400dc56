// IoBackend::ReadBatchWith: one batch over two files, for every pair of
// backends (io_uring pairs share one ring); errors name the right file.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "storage/io/io_backend.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

class ReadBatchWithTest : public ::testing::TestWithParam<std::pair<IoKind, IoKind>> {};

Result<std::unique_ptr<IoBackend>> Open(const std::string& path, IoKind kind) {
  IoOptions o;
  o.kind = kind;
  o.queue_depth = 4;  // fewer than the requests: the window must slide
  return OpenIoBackend(path, o);
}

TEST_P(ReadBatchWithTest, BothFilesInOneBatch) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  std::string a(1 << 20, '\0'), b(3 << 16, '\0');
  for (char& c : a) c = static_cast<char>(rng());
  for (char& c : b) c = static_cast<char>(rng());
  testing::WriteFileBytes(dir.File("a"), a);
  testing::WriteFileBytes(dir.File("b"), b);
  auto fa = Open(dir.File("a"), GetParam().first);
  auto fb = Open(dir.File("b"), GetParam().second);
  if (!fa.ok() || !fb.ok()) GTEST_SKIP() << (fa.ok() ? fb.status() : fa.status()).ToString();

  std::vector<std::string> bufs;
  std::vector<ReadRequest> ra, rb;
  std::vector<std::pair<const std::string*, uint64_t>> expect_a, expect_b;
  bufs.reserve(40);
  for (int k = 0; k < 20; ++k) {
    for (int side = 0; side < 2; ++side) {
      const std::string& src = side ? b : a;
      const uint64_t len = 1 + rng() % 9000;
      const uint64_t off = rng() % (src.size() - len);
      bufs.emplace_back(len, '\0');
      (side ? rb : ra).push_back({off, len, bufs.back().data()});
    }
  }
  ASSERT_OK((*fa)->ReadBatchWith(ra, **fb, rb));
  for (const auto& r : ra) EXPECT_EQ(std::string(r.dest, r.length), a.substr(r.offset, r.length));
  for (const auto& r : rb) EXPECT_EQ(std::string(r.dest, r.length), b.substr(r.offset, r.length));

  // A read past the end of the second file fails naming that file.
  std::string past(100, '\0');
  std::vector<ReadRequest> bad{{b.size() - 10, 100, past.data()}};
  Status s = (*fa)->ReadBatchWith(ra, **fb, bad);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(dir.File("b")), std::string::npos) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, ReadBatchWithTest,
    ::testing::Values(std::pair{IoKind::kUring, IoKind::kUring}, std::pair{IoKind::kUring, IoKind::kPread},
                      std::pair{IoKind::kPread, IoKind::kMmap}, std::pair{IoKind::kMmap, IoKind::kUring}),
    [](const auto& info) {
      return std::string(IoKindName(info.param.first)) + "_" + std::string(IoKindName(info.param.second));
    });

}  // namespace
}  // namespace momenta
