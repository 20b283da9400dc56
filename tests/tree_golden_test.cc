// The moment buffer's file format v1 stays readable: a tree file written by
// this version (tests/data/golden_tree_v1.tree, for golden_tree_v1_array.npy:
// 1000 f8 elements, J = 2, leaf 16, fan-out 4) opens, and every node equals
// the summary recomputed from the array. A format change adds a v2 golden
// file; this one is never rewritten.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "buffers/moment_tree.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

TEST(TreeGoldenTest, VersionOneStillDecodes) {
  testing::ScratchDir dir;
  // Copy: opening maps the file writable.
  const std::string tree_path = dir.File("tree");
  std::filesystem::copy_file(std::string(MOMENTA_TEST_DATA_DIR) + "/golden_tree_v1.tree", tree_path);
  IoOptions io;
  io.kind = IoKind::kPread;
  auto tree = MomentTree::Open(tree_path, /*writable=*/false, io);
  ASSERT_TRUE(tree.ok()) << tree.status().ToString();
  const TreeFileHeader& h = (*tree)->header();
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(h.state, static_cast<uint32_t>(kTreeClean));
  EXPECT_EQ(h.order, 2u);
  EXPECT_EQ(h.fanout, 4u);
  EXPECT_EQ(h.leaf_span, 16u);
  EXPECT_EQ(h.length, 1000u);
  EXPECT_EQ(h.node_bytes, 16u * 8);

  auto array = ArrayFile::Open(std::string(MOMENTA_TEST_DATA_DIR) + "/golden_tree_v1_array.npy", io);
  ASSERT_TRUE(array.ok());
  std::vector<char> raw(1000 * 8);
  ASSERT_TRUE((*array)->ReadRaw(0, 1000, raw.data()).ok());
  std::vector<double> scratch(1000);
  const TreeLayout& layout = (*tree)->layout();
  ASSERT_EQ(layout.levels(), 3);  // 63, 16, 4 nodes
  for (int level = 1; level <= layout.levels(); ++level) {
    for (uint64_t j = 0; j < layout.nodes(level); ++j) {
      SCOPED_TRACE("level " + std::to_string(level) + " node " + std::to_string(j));
      const uint64_t first = layout.node_first(level, j), n = layout.node_end(level, j) - first;
      const RangeSummary want = RangeSummary::OfElements(2, DType::kF8, raw.data() + first * 8, n, scratch.data());
      const RangeSummary got = (*tree)->Summary(level, j);
      for (int m = 0; m <= 2; ++m)
        EXPECT_NEAR(static_cast<double>(got.index.moment(m)), static_cast<double>(want.index.moment(m)),
                    1e-9 * std::fabs(static_cast<double>(want.index.moment(m))) + 1e-9);
      EXPECT_EQ(got.extremes.min, want.extremes.min);
      EXPECT_EQ(got.extremes.max, want.extremes.max);
      EXPECT_NEAR(static_cast<double>(got.values.central_sum_of_squares()),
                  static_cast<double>(want.values.central_sum_of_squares()),
                  1e-9 * static_cast<double>(want.values.central_sum_of_squares()) + 1e-9);
    }
  }
}

}  // namespace
}  // namespace momenta
