// TreeMaintenance (buffers/tree/tree_maintenance.h) directly: a built tree over an
// int64 array (values at the dtype's extremes, seed printed) is changed one
// cell at a time (Apply) and a chunk at a time (ApplyGathered), then Flush;
// every node then passes its check and equals the summary recomputed from
// the array: exact sums and sums of squares equal, extremes equal (a changed
// extreme is recomputed), moments within 1e-9 of their magnitude.
#include "buffers/tree/tree_maintenance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "buffers/algebra/statistics.h"  // Int128ToString
#include "buffers/tree/tree_build.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kN = 3000;

IoOptions PreadIo() {
  IoOptions io;
  io.kind = IoKind::kPread;
  return io;
}

int64_t RandomCell(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return std::numeric_limits<int64_t>::min() + static_cast<int64_t>(rng() % 3);
    case 1:
      return std::numeric_limits<int64_t>::max() - static_cast<int64_t>(rng() % 3);
    case 2:
      return static_cast<int64_t>(rng() % 2001) - 1000;
    default:
      return static_cast<int64_t>(rng());
  }
}

class TreeMaintenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = testing::TestSeed();
    rng_.seed(seed_);
    IoOptions io = PreadIo();
    io.writable = true;
    const uint64_t shape[] = {kN};
    auto f = ArrayFile::Create(dir_.File("a.npy"), DType::kI8, shape, io);
    ASSERT_OK(f);
    array_ = std::move(f).value();
    cells_.resize(kN);
    for (int64_t& v : cells_) v = RandomCell(rng_);
    ASSERT_OK(array_->WriteRaw(0, kN, reinterpret_cast<const char*>(cells_.data())));
    TreeOptions options;
    options.order = 2;
    options.leaf_span = 64;
    options.fanout = 4;
    auto tree = MomentTree::Create(dir_.File("tree"), *array_, options, PreadIo());
    ASSERT_OK(tree);
    tree_ = std::move(tree).value();
    ASSERT_OK(BuildTree(*array_, *tree_));
  }

  // Writes cells_[i] = v to the array; the old and new bytes for the tree.
  void Change(uint64_t i, int64_t v, int64_t* old_value) {
    *old_value = cells_[i];
    cells_[i] = v;
    ASSERT_OK(array_->WriteRaw(i, 1, reinterpret_cast<const char*>(&cells_[i])));
  }

  void ExpectEveryNodeMatchesTheArray() {
    SCOPED_TRACE("seed " + std::to_string(seed_) + " (MOMENTA_SEED reproduces)");
    const TreeLayout& layout = tree_->layout();
    std::vector<double> scratch(kN);
    for (int level = 1; level <= layout.levels(); ++level)
      for (uint64_t j = 0; j < layout.nodes(level); ++j) {
        SCOPED_TRACE("level " + std::to_string(level) + " node " + std::to_string(j));
        EXPECT_OK(tree_->VerifyNode(level, j, tree_->Node(level, j)));
        const uint64_t first = layout.node_first(level, j), n = layout.node_end(level, j) - first;
        const RangeSummary want = RangeSummary::OfElements(
            2, DType::kI8, reinterpret_cast<const char*>(cells_.data() + first), n, scratch.data());
        const RangeSummary got = tree_->Summary(level, j);
        EXPECT_EQ(Int128ToString(got.exact_sum), Int128ToString(want.exact_sum));
        EXPECT_TRUE(got.exact_sumsq == want.exact_sumsq);
        EXPECT_EQ(got.extremes.min, want.extremes.min);
        EXPECT_EQ(got.extremes.max, want.extremes.max);
        for (int m = 0; m <= 2; ++m) {
          long double magnitude = 0;
          for (uint64_t x = 0; x < n; ++x)
            magnitude +=
                std::pow(static_cast<long double>(x), m) * std::fabs(static_cast<long double>(cells_[first + x]));
          EXPECT_LE(std::fabs(got.index.moment(m) - want.index.moment(m)), 1e-9L * magnitude + 1) << "moment " << m;
        }
      }
  }

  testing::ScratchDir dir_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::unique_ptr<ArrayFile> array_;
  std::unique_ptr<MomentTree> tree_;
  std::vector<int64_t> cells_;
};

TEST_F(TreeMaintenanceTest, OneCellAtATime) {
  TreeMaintenance m(*array_);
  m.Begin(*tree_);
  for (int k = 0; k < 300; ++k) {
    // Every tenth change replaces the array's current largest cell: its nodes' max shrinks.
    const uint64_t i = k % 10 == 0 ? std::max_element(cells_.begin(), cells_.end()) - cells_.begin() : rng_() % kN;
    int64_t old_value;
    Change(i, k % 10 == 0 ? 0 : RandomCell(rng_), &old_value);
    ASSERT_OK(m.Apply(*tree_, i, reinterpret_cast<const char*>(&old_value), reinterpret_cast<const char*>(&cells_[i])));
  }
  EXPECT_TRUE(m.any_queued());  // the shrunk extremes wait for Flush
  ASSERT_OK(m.Flush(*tree_, nullptr));
  EXPECT_FALSE(m.any_queued());
  ExpectEveryNodeMatchesTheArray();
}

TEST_F(TreeMaintenanceTest, AChunkGathered) {
  TreeMaintenance m(*array_);
  m.Begin(*tree_);
  std::set<uint64_t> chosen;
  while (chosen.size() < 500) chosen.insert(rng_() % kN);
  std::vector<CellChange> changes;
  for (uint64_t i : chosen) {
    int64_t old_value;
    Change(i, RandomCell(rng_), &old_value);
    const CellChange c =
        m.ChangeOf(i, reinterpret_cast<const char*>(&old_value), reinterpret_cast<const char*>(&cells_[i]));
    EXPECT_EQ(c.index, i);
    EXPECT_EQ(Int128ToString(c.exact.sum),
              Int128ToString(static_cast<Int128>(cells_[i]) - static_cast<Int128>(old_value)));
    EXPECT_TRUE(c.exact.squares == Int192::Square(cells_[i]) - Int192::Square(old_value));
    changes.push_back(c);
  }
  ASSERT_OK(m.ApplyGathered(*tree_, changes));
  ASSERT_OK(m.Flush(*tree_, nullptr));
  ExpectEveryNodeMatchesTheArray();
}

TEST_F(TreeMaintenanceTest, QueuedRefreshRecomputesFromTheArray) {
  TreeMaintenance m(*array_);
  m.Begin(*tree_);
  // The array changes behind the tree's back; a queued refresh of the cell's
  // nodes makes them right again.
  int64_t old_value;
  Change(100, 12345, &old_value);
  EXPECT_EQ(m.leaves_queued(), 0u);
  m.QueueRefresh(*tree_, 100);
  EXPECT_EQ(m.leaves_queued(), 1u);
  ASSERT_OK(m.Flush(*tree_, nullptr));
  EXPECT_EQ(m.leaves_queued(), 0u);
  ExpectEveryNodeMatchesTheArray();
}

}  // namespace
}  // namespace momenta
