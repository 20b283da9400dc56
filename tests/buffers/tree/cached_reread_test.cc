// A range asked again after its end leaves were read (and so, with the
// default read policy, stay in the page cache) is answered with the array as
// it is now: a writer's update into one of those leaves, committed, is never
// answered stale by a reader handle that read the leaf before it. Checked
// for the default policy (short reads kept in the page cache) and the one
// before it (every aligned read O_DIRECT), against exact sums of integer
// values.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 1 << 16;
constexpr uint64_t kLeaf = 1024;

class CachedRereadTest : public ::testing::TestWithParam<bool> {  // param: reads kept in the page cache
 protected:
  void SetUp() override {
    seed_ = testing::TestSeed();
    std::printf("MOMENTA_SEED=%llu\n", static_cast<unsigned long long>(seed_));
    std::mt19937_64 rng(seed_);
    path_ = dir_.File("a.npy");
    values_.resize(kLength);
    for (uint64_t i = 0; i < kLength; ++i) {
      values_[i] = static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000);  // integers: exact sums
    }
    ASSERT_OK(testing::WriteF8Array(path_, values_));
    BufferedArrayOptions options;
    options.io.writable = true;
    options.tree.leaf_span = kLeaf;
    options.tree.fanout = 8;
    auto writer = BufferedArray::Open(path_, options);
    ASSERT_OK(writer);
    writer_ = std::move(writer).value();
  }

  std::unique_ptr<BufferedArray> OpenReader() {
    BufferedArrayOptions options;
    if (!GetParam()) options.io.direct_min_bytes = 0;  // the policy before: aligned reads O_DIRECT
    auto ba = BufferedArray::Open(path_, options);
    EXPECT_OK(ba);
    return ba.ok() ? std::move(ba).value() : nullptr;
  }

  long double Sum(uint64_t p, uint64_t q) const {
    long double s = 0;
    for (uint64_t i = p; i < q; ++i) s += values_[i];
    return s;
  }
  static long double Answer(BufferedArray& ba, uint64_t p, uint64_t q) {
    auto summary = ba.Summarize(p, q, false);
    EXPECT_OK(summary);
    if (!summary.ok()) return -1e300L;
    auto sum = ComputeStat(Stat::kSum, StatParams{}, *summary, p, DType::kF8);
    EXPECT_OK(sum);
    return sum.ok() ? sum->values[0] : -1e300L;
  }

  uint64_t seed_ = 0;
  testing::ScratchDir dir_;
  std::string path_;
  std::vector<double> values_;
  std::unique_ptr<BufferedArray> writer_;
};

TEST_P(CachedRereadTest, AnUpdateIntoAnEndLeafReadBeforeIsSeen) {
  auto reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  std::mt19937_64 rng(seed_ + 1);
  for (int round = 0; round < 40; ++round) {
    // Ends inside leaves, whole leaves between them (the end pieces are read).
    uint64_t p = rng() % kLength, q = rng() % kLength;
    if (p > q) std::swap(p, q);
    if (q - p < 3 * kLeaf) continue;
    SCOPED_TRACE("round " + std::to_string(round) + ", range " + std::to_string(p) + ":" + std::to_string(q));
    ASSERT_EQ(Answer(*reader, p, q), Sum(p, q));
    ASSERT_EQ(Answer(*reader, p, q), Sum(p, q)) << "asked again";
    // Change a cell the last answer read, in the left or right end leaf.
    const bool left = rng() % 2 == 0;
    const uint64_t leaf_first = (left ? p : q - 1) / kLeaf * kLeaf;
    const uint64_t at = left ? p + rng() % (std::min(leaf_first + kLeaf, q) - p)
                             : std::max(leaf_first, p) + rng() % (q - std::max(leaf_first, p));
    const double now = static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000) + 5000;
    const IndexedValue update{at, Value::Float(now)};
    ASSERT_OK(writer_->Apply({&update, 1}));
    ASSERT_OK(writer_->Commit());
    values_[at] = now;
    ASSERT_EQ(Answer(*reader, p, q), Sum(p, q)) << "after the update of " << at;
  }
}

INSTANTIATE_TEST_SUITE_P(ReadPolicies, CachedRereadTest, ::testing::Values(true, false),
                         [](const auto& info) { return std::string(info.param ? "kept" : "direct"); });

}  // namespace
}  // namespace momenta
