// BuildTree over a sparse f8 array whose data lies in more separate regions
// than the build has chunk buffers, so the stream of reads wraps around its
// ring of buffers: every node is bit-identical whether the array is read
// through io_uring (one window over the whole stream) or pread (one read
// after another), and every leaf equals the summary recomputed from the array.
#include "buffers/tree/tree_build.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kN = uint64_t{1} << 21;  // 16 MiB of f8, sparse
constexpr uint64_t kRegions = 9;
constexpr uint64_t kRegionCells = 20000;  // not a multiple of the leaf: runs end mid-leaf

class TreeBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = testing::TestSeed();
    std::mt19937_64 rng(seed_);
    std::normal_distribution<double> step(0.0, 1.0);
    IoOptions io;
    io.kind = IoKind::kPread;
    io.writable = true;
    const uint64_t shape[] = {kN};
    auto f = ArrayFile::Create(dir_.File("a.npy"), DType::kF8, shape, io);
    ASSERT_OK(f);
    cells_.assign(kN, 0.0);
    double walk = 1e9;  // a random walk far from zero
    for (uint64_t r = 0; r < kRegions; ++r) {
      const uint64_t first = r * (kN / kRegions) + 777;
      for (uint64_t i = first; i < first + kRegionCells; ++i) cells_[i] = walk += step(rng);
      ASSERT_OK((*f)->WriteRaw(first, kRegionCells, reinterpret_cast<const char*>(&cells_[first])));
    }
  }

  // A tree built from the array opened with backend `kind`.
  std::unique_ptr<MomentTree> Build(IoKind kind, const std::string& name) {
    IoOptions io;
    io.kind = kind;
    auto array = ArrayFile::Open(dir_.File("a.npy"), io);
    EXPECT_OK(array);
    if (!array.ok()) return nullptr;
    TreeOptions options;
    options.order = 2;
    options.leaf_span = 1024;
    options.fanout = 8;
    auto tree = MomentTree::Create(dir_.File(name), **array, options, io);
    EXPECT_OK(tree);
    if (!tree.ok()) return nullptr;
    auto stats = BuildTree(**array, **tree);
    EXPECT_OK(stats);
    return std::move(tree).value();
  }

  testing::ScratchDir dir_;
  uint64_t seed_ = 0;
  std::vector<double> cells_;
};

TEST_F(TreeBuildTest, StreamedBuildIsBitIdenticalToOneReadAtATime) {
  SCOPED_TRACE("seed " + std::to_string(seed_) + " (MOMENTA_SEED reproduces)");
  auto streamed = Build(IoKind::kUring, "uring.tree");
  if (streamed == nullptr && HasFailure()) return;
  auto plain = Build(IoKind::kPread, "pread.tree");
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(streamed, nullptr);
  const TreeLayout& layout = plain->layout();
  const size_t bytes = plain->codec().bytes();
  std::vector<double> scratch(layout.leaf_span());
  for (int level = 1; level <= layout.levels(); ++level)
    for (uint64_t j = 0; j < layout.nodes(level); ++j) {
      ASSERT_EQ(std::memcmp(streamed->Node(level, j), plain->Node(level, j), bytes), 0)
          << "level " << level << " node " << j;
      if (level > 1) continue;
      const uint64_t first = layout.node_first(1, j), n = layout.node_end(1, j) - first;
      const RangeSummary want =
          RangeSummary::OfElements(2, DType::kF8, reinterpret_cast<const char*>(&cells_[first]), n, scratch.data());
      const RangeSummary got = streamed->Summary(1, j);
      for (int m = 0; m <= 2; ++m) ASSERT_EQ(got.index.moment(m), want.index.moment(m)) << "leaf " << j;
    }
}

}  // namespace
}  // namespace momenta
