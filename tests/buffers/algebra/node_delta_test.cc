// NodeDelta and NodeCodec::ApplyDelta (buffers/algebra/node_delta.h): a chunk's
// changes gathered per node and applied once give the node its cells' summary
// (recomputed from the new cells, in long double), as closely as applying the
// changes one at a time does; a parent updated from its children's deltas,
// moved into its frame, likewise. Extremes that may have shrunk are always
// flagged when the one-at-a-time path flags them.
#include "buffers/algebra/node_delta.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;

RangeSummary OfCells(int order, const std::vector<double>& cells, size_t first, size_t n) {
  std::vector<double> scratch(n);
  return RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(cells.data() + first), n,
                                  scratch.data());
}

// Σ x^j |a_x|: the scale a moment's error is measured against.
ld Magnitude(const std::vector<double>& cells, size_t first, size_t n, int j) {
  ld m = 0;
  for (size_t x = 0; x < n; ++x) m += std::pow(static_cast<ld>(x), j) * std::fabs(static_cast<ld>(cells[first + x]));
  return m;
}

// `got` (a node's decode) against the summary of cells [first, first + n).
void ExpectSummaryOf(const RangeSummary& got, const std::vector<double>& cells, size_t first, size_t n, int order,
                     const std::string& what) {
  const RangeSummary want = OfCells(order, cells, first, n);
  for (int j = 0; j <= order; ++j) {
    const ld scale = Magnitude(cells, first, n, j);
    EXPECT_LE(std::fabs(got.index.moment(j) - want.index.moment(j)), 1e-15L * scale + 1e-300L)
        << what << ": moment " << j << " " << static_cast<double>(got.index.moment(j)) << " against "
        << static_cast<double>(want.index.moment(j));
  }
  ASSERT_EQ(got.values.count(), want.values.count()) << what;
  const ld mean = want.values.mean(), css = want.values.central_sum_of_squares();
  EXPECT_LE(std::fabs(got.values.mean() - mean), 1e-15L * std::fabs(mean) + 1e-12L) << what;
  EXPECT_LE(std::fabs(got.values.central_sum_of_squares() - css), 1e-9L * css + 1e-9L) << what;
}

std::vector<size_t> DistinctCells(std::mt19937_64& rng, size_t n, size_t m) {
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(m);
  return all;
}

TEST(NodeDeltaTest, GatheredEqualsTheCellsAndFlagsShrinkingExtremes) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)");
  std::mt19937_64 rng(seed);
  for (int order : {0, 2, 5, 8}) {
    for (double mean : {0.0, 1e6, -3e9}) {
      for (size_t m : {size_t{1}, size_t{7}, size_t{300}, size_t{1000}}) {
        const std::string what =
            "order " + std::to_string(order) + ", mean " + std::to_string(mean) + ", " + std::to_string(m) + " changes";
        SCOPED_TRACE(what);
        const size_t n = 1000;
        std::normal_distribution<double> value(mean, 1.0);
        std::vector<double> cells(n);
        for (double& c : cells) c = value(rng);
        const NodeCodec codec(order);
        std::vector<double> one(codec.doubles()), gathered(codec.doubles());
        codec.Encode(OfCells(order, cells, 0, n), 0, one.data());
        gathered = one;
        NodeDelta d(codec.Shift(gathered.data()));
        bool one_shrink = false;
        for (size_t x : DistinctCells(rng, n, m)) {
          CellChange c{x, cells[x], rng() % 16 == 0 ? mean + 50 : value(rng), 0};
          cells[x] = c.new_value;
          one_shrink |= codec.ApplyUpdate(one.data(), n, x, c.old_value, c.new_value, {}).extremes_may_shrink;
          d.Add(order, x, c);
        }
        const NodeCodec::UpdateOutcome outcome = codec.ApplyDelta(gathered.data(), n, d);
        EXPECT_FALSE(outcome.drifted);
        if (one_shrink) {
          EXPECT_TRUE(outcome.extremes_may_shrink);
        }
        const RangeSummary want = OfCells(order, cells, 0, n);
        if (outcome.extremes_may_shrink) codec.SetExtremes(gathered.data(), want.extremes);
        const RangeSummary got = codec.Decode(gathered.data(), n);
        EXPECT_EQ(got.extremes.min, want.extremes.min);
        EXPECT_EQ(got.extremes.max, want.extremes.max);
        ExpectSummaryOf(got, cells, 0, n, order, what + ", gathered");
        // And no further from the cells than one at a time.
        const RangeSummary by_one = codec.Decode(one.data(), n);
        for (int j = 0; j <= order; ++j)
          EXPECT_LE(std::fabs(got.index.moment(j) - want.index.moment(j)),
                    std::fabs(by_one.index.moment(j) - want.index.moment(j)) + 1e-17L * Magnitude(cells, 0, n, j))
              << "moment " << j;
      }
    }
  }
}

// A parent over `fanout` leaves, updated once from their deltas moved to its
// start (AddChild), equals the summary of all its cells; exact integer sums
// add exactly.
TEST(NodeDeltaTest, AParentFromItsChildrensDeltas) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)");
  std::mt19937_64 rng(seed);
  const int order = 4;
  const size_t span = 256, fanout = 8, n = span * fanout;
  const NodeCodec codec(order);
  std::normal_distribution<double> value(1e5, 10.0);
  std::vector<double> cells(n);
  for (double& c : cells) c = value(rng);
  std::vector<double> parent(codec.doubles());
  codec.Encode(OfCells(order, cells, 0, n), 0, parent.data());
  NodeDelta up(codec.Shift(parent.data()));
  for (size_t leaf = 0; leaf < fanout; leaf += 2) {  // every other leaf changes
    std::vector<double> node(codec.doubles());
    codec.Encode(OfCells(order, cells, leaf * span, span), 0, node.data());
    NodeDelta d(codec.Shift(node.data()));
    for (size_t x : DistinctCells(rng, span, 1 + rng() % span)) {
      const size_t at = leaf * span + x;
      CellChange c{at, cells[at], value(rng), 0};
      cells[at] = c.new_value;
      d.Add(order, x, c);
    }
    const NodeCodec::UpdateOutcome outcome = codec.ApplyDelta(node.data(), span, d);
    if (outcome.extremes_may_shrink) codec.SetExtremes(node.data(), OfCells(order, cells, leaf * span, span).extremes);
    ExpectSummaryOf(codec.Decode(node.data(), span), cells, leaf * span, span, order, "leaf " + std::to_string(leaf));
    up.AddChild(order, leaf * span, d);
  }
  const NodeCodec::UpdateOutcome outcome = codec.ApplyDelta(parent.data(), n, up);
  if (outcome.extremes_may_shrink) codec.SetExtremes(parent.data(), OfCells(order, cells, 0, n).extremes);
  ExpectSummaryOf(codec.Decode(parent.data(), n), cells, 0, n, order, "the parent");

  // Integer cells: the exact sum moves by exactly Σ (new − old), the exact
  // sum of squares by Σ (new² − old²): (81 − 25) + (49 − 4) = 101.
  NodeDelta exact(0.0);
  exact.Add(order, 3, CellChange{3, 5.0, 9.0, ExactChangeOf(5, 9)});
  exact.Add(order, 10, CellChange{10, -2.0, -7.0, ExactChangeOf(-2, -7)});
  NodeDelta over(0.0);
  over.AddChild(order, 512, exact);
  EXPECT_TRUE(over.exact.sum == -1);
  EXPECT_TRUE(over.exact.squares == Int192::Of(101));
  EXPECT_EQ(over.changes, 2u);
  EXPECT_EQ(over.new_min, -7.0);
  EXPECT_EQ(over.old_max, 5.0);
}

// Rebasing moves the s2 sums to another shift exactly as recomputing them
// about it would (up to rounding).
TEST(NodeDeltaTest, RebaseIsRecomputingAboutTheNewShift) {
  NodeDelta a(1000.0), b(1003.5);
  const CellChange changes[] = {{0, 1001.0, 999.5, 0}, {1, 1002.25, 1010.0, 0}, {2, 990.0, 991.0, 0}};
  for (const CellChange& c : changes) {
    a.Add(0, c.index, c);
    b.Add(0, c.index, c);
  }
  a.RebaseTo(1003.5);
  EXPECT_NEAR(static_cast<double>(a.s2), static_cast<double>(b.s2), 1e-12);
  EXPECT_NEAR(static_cast<double>(a.s1), static_cast<double>(b.s1), 1e-12);
  EXPECT_GE(a.s2_magnitude, b.s2_magnitude * (1 - 1e-15L));  // a bound, never less
}

}  // namespace
}  // namespace momenta
