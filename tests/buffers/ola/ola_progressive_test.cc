// Progressive sums through the Ola levels (buffers/ola/ola_progressive.h,
// buffers/ola/ola_refine.h): the residual's weights are where and as large as
// ola_refine.h says, the levels' cut sum plus the residual is the exact sum,
// and every bound printed — coarse to fine, on adversarial and random data,
// for both buffer kinds — holds the exact sum (a long-double reference).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/ola/ola_buffer.h"
#include "buffers/ola/ola_file.h"
#include "buffers/ola/ola_progressive.h"
#include "buffers/ola/ola_refine.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

// In memory: w is zero outside OlaResidualCells, |w| <= OlaResidualWeightBound,
// and AnswerAbove(k) + Σ w_c a_c is the exact sum, for every level and many ranges.
TEST(OlaProgressiveRefineTest, ResidualWeightsAreWhereAndAsLargeAsStated) {
  std::mt19937_64 rng(testing::TestSeed());
  struct Shape {
    int nodes;
    uint64_t bin;
    uint64_t length;
  };
  for (const Shape& s : std::vector<Shape>{
           {2, 2, 257}, {4, 2, 300}, {4, 4, 1000}, {6, 3, 777}, {8, 2, 1500}, {8, 4, 3000}, {4, 16, 2049}}) {
    SCOPED_TRACE("N " + std::to_string(s.nodes) + " b " + std::to_string(s.bin) + " n " + std::to_string(s.length));
    std::vector<double> a(s.length);
    std::normal_distribution<double> normal(3, 2);
    for (double& v : a) v = normal(rng);
    OlaOptions options;
    options.nodes = s.nodes;
    options.bin = s.bin;
    options.storage = OlaStorage::kExplicitLevels;
    auto ola = OlaBuffer::Build(options, a);
    ASSERT_OK(ola);
    const OlaLayout& layout = ola->layout();
    const OlaStencil stencil(layout.nodes(), layout.bin());
    for (int r = 0; r < 40; ++r) {
      uint64_t p = rng() % s.length, q = rng() % (s.length + 1);
      if (r == 0) p = 0, q = s.length;
      if (r == 1) p = 0, q = 1;
      if (r == 2) p = s.length - 1, q = s.length;
      if (p > q) std::swap(p, q);
      if (p == q) ++q;
      long double exact = 0;
      for (uint64_t c = p; c < q; ++c) exact += a[c];
      for (int k = 1; k <= layout.levels(); ++k) {
        const auto w = OlaResidualWeights(layout, stencil, k, p, q, {0, s.length});
        const auto runs = OlaResidualCells(layout, k, p, q);
        const long double bound = OlaResidualWeightBound(layout, k);
        long double total = ola->AnswerAbove(p, q, k).moment(0), scale = 0;
        for (uint64_t c = 0; c < s.length; ++c) {
          const bool in_runs = std::any_of(runs.begin(), runs.end(),
                                           [&](const IndexRange& run) { return c >= run.begin && c < run.end; });
          if (!in_runs) {
            ASSERT_LT(std::fabs(w[c]), 1e-15L) << "cell " << c << " level " << k << " range " << p << ":" << q;
          }
          ASSERT_LE(std::fabs(w[c]), bound * (1 + 1e-12L)) << "cell " << c << " level " << k;
          total += w[c] * a[c];
          scale += std::fabs(a[c]);
        }
        EXPECT_NEAR(static_cast<double>(total), static_cast<double>(exact), 1e-12 * static_cast<double>(scale))
            << "level " << k << " range " << p << ":" << q;
      }
    }
  }
}

constexpr uint64_t kLength = 60000;
constexpr uint64_t kSpikeAt = 30517;

BufferedArrayOptions Options(int nodes, uint64_t bin) {
  BufferedArrayOptions o;
  o.io.writable = true;
  o.io.kind = IoKind::kPread;
  o.sync = LogSync::kBatch;
  o.tree.order = nodes > 0 ? 0 : 2;
  o.tree.leaf_span = 1024;
  o.tree.fanout = 4;
  o.tree.ola_nodes = nodes;
  o.tree.ola_bin = bin;
  return o;
}

// The hard data kinds: alternating signs, a huge spike, all negative,
// a large offset with small noise, and plain random.
std::vector<double> MakeData(const std::string& kind, std::mt19937_64& rng) {
  std::vector<double> a(kLength);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  for (uint64_t i = 0; i < kLength; ++i) {
    if (kind == "alternating")
      a[i] = (i % 2 ? -1 : 1) * (1 + 0.01 * uniform(rng));
    else if (kind == "spike")
      a[i] = i == kSpikeAt ? 1e250 : (i == kSpikeAt + 7 ? -3e249 : normal(rng));
    else if (kind == "negative")
      a[i] = -1 - 99 * uniform(rng);
    else if (kind == "offset")
      a[i] = 1e9 + normal(rng);
    else
      a[i] = 5 + normal(rng);
  }
  return a;
}

void WriteArray(const std::string& path, const std::vector<double>& a) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  auto f = ArrayFile::Create(path, DType::kF8, shape, io);
  ASSERT_OK(f);
  std::vector<Value> values;
  for (double v : a) values.push_back(Value::Float(v));
  ASSERT_OK((*f)->WriteValues(0, values));
}

// MakeData(kind), written to a new f8 array at `path`; the data returned.
std::vector<double> WrittenData(const std::string& path, const std::string& kind, std::mt19937_64& rng) {
  auto a = MakeData(kind, rng);
  WriteArray(path, a);
  return a;
}

// Every bound of [p, q), from Start to done, holds the exact sum; returns how many came through the levels.
int ExpectSound(BufferedArray& ba, const std::vector<double>& a, uint64_t p, uint64_t q) {
  long double exact = 0;
  for (uint64_t c = p; c < q; ++c) exact += a[c];
  OlaProgressiveSum ps(TreeOf(ba), OlaOf(ba), ba.array(), p, q);
  auto b = ps.Start();
  EXPECT_OK(b);
  if (!b.ok()) return 0;
  int lines = 0, level = OlaOf(ba) ? OlaOf(ba)->layout().levels() + 1 : 0;
  EXPECT_EQ(ps.level(), 0) << "the first bound is the tree's";
  for (;;) {
    ++lines;
    EXPECT_LE(static_cast<long double>(b->lower), exact)
        << p << ":" << q << " line " << lines << " level " << ps.level();
    EXPECT_GE(static_cast<long double>(b->upper), exact)
        << p << ":" << q << " line " << lines << " level " << ps.level();
    EXPECT_LE(b->lower, b->estimate);
    EXPECT_LE(b->estimate, b->upper);
    if (ps.through_levels() && lines > 1) {
      EXPECT_EQ(ps.level(), level) << "coarse to fine, one level a line";
    }
    --level;
    if (ps.done()) break;
    b = ps.Next();
    EXPECT_OK(b);
    if (!b.ok()) return lines;
  }
  if (ps.through_levels()) {
    EXPECT_EQ(ps.level(), 1);
    EXPECT_EQ(ps.array_bytes_read(), 0u) << "the levels read no cell";
  }
  return ps.through_levels() ? lines : 0;
}

void ExpectSoundRanges(BufferedArray& ba, const std::vector<double>& a, std::mt19937_64& rng, bool ola) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {{0, kLength},
                                                       {0, 1},
                                                       {kLength - 1, kLength},
                                                       {kSpikeAt - 500, kSpikeAt + 3},  // the spike near an end
                                                       {kSpikeAt + 1, kSpikeAt + 9000},
                                                       {kSpikeAt - 2, kSpikeAt + 2},
                                                       {1000, 2000}};
  for (int r = 0; r < 60; ++r) {
    uint64_t p = rng() % kLength, q = rng() % (kLength + 1);
    if (r % 3 == 0) q = std::min(kLength, p + 1 + rng() % 3000);
    if (p > q) std::swap(p, q);
    if (p == q) ++q;
    ranges.emplace_back(p, q);
  }
  int through = 0;
  for (const auto& [p, q] : ranges) through += ExpectSound(ba, a, p, q) > 0;
  if (ola) {
    EXPECT_EQ(through, static_cast<int>(ranges.size())) << "a fresh Ola array refines through its levels";
  }
}

TEST(OlaProgressiveTest, EveryBoundHoldsTheExactSumOnBothKinds) {
  const uint64_t seed = testing::TestSeed();
  for (const std::string kind : {"alternating", "spike", "negative", "offset", "random"}) {
    for (const auto& [nodes, bin] : std::vector<std::pair<int, uint64_t>>{{0, 0}, {2, 16}, {4, 8}, {8, 5}, {4, 1024}}) {
      SCOPED_TRACE(kind + " N " + std::to_string(nodes) + " b " + std::to_string(bin));
      std::mt19937_64 rng(seed + nodes * 131 + bin + kind.size());
      testing::ScratchDir dir;
      const std::string path = dir.File("a.npy");
      const auto a = WrittenData(path, kind, rng);
      auto ba = BufferedArray::Open(path, Options(nodes, bin));
      ASSERT_OK(ba);
      ASSERT_EQ(OlaOf(**ba) != nullptr, nodes > 0);
      ExpectSoundRanges(**ba, a, rng, nodes > 0);
    }
  }
}

// The first bound is the tree's; each level's is at least as narrow, and the
// finest, on smooth data, narrower than the tree's alone.
TEST(OlaProgressiveTest, TheLevelsNarrowTheTreesBound) {
  std::mt19937_64 rng(testing::TestSeed());
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  const auto a = WrittenData(path, "random", rng);
  auto ba = BufferedArray::Open(path, Options(2, 16));
  ASSERT_OK(ba);
  ProgressiveSum tree(TreeOf(**ba), (*ba)->array(), 1500, 41700);
  auto tree_first = tree.Start();
  ASSERT_OK(tree_first);
  OlaProgressiveSum ps(TreeOf(**ba), OlaOf(**ba), (*ba)->array(), 1500, 41700);
  auto first = ps.Start();
  ASSERT_OK(first);
  EXPECT_EQ(first->lower, tree_first->lower);
  EXPECT_EQ(first->upper, tree_first->upper);
  SumBound last = *first;
  while (!ps.done()) {
    auto b = ps.Next();
    ASSERT_OK(b);
    EXPECT_LE(b->upper - b->lower, last.upper - last.lower) << "never wider";
    last = *b;
  }
  EXPECT_LT(last.upper - last.lower, 0.5 * (tree_first->upper - tree_first->lower)) << last.lower << " " << last.upper;
}

// After updates the Ola buffer's rounding is stated for values the cells held
// before, which the tree's extremes no longer bound (the spike replaced by
// 1.5): the levels bound it by the header's max_abs_held instead, which the
// build set to the largest |a| and no update lowers. Every bound still holds.
TEST(OlaProgressiveTest, AfterUpdatesTheLevelsBoundByTheLargestValueHeld) {
  std::mt19937_64 rng(testing::TestSeed());
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  auto a = WrittenData(path, "spike", rng);
  auto ba = BufferedArray::Open(path, Options(4, 8));
  ASSERT_OK(ba);
  ASSERT_NE(OlaOf(**ba), nullptr);
  EXPECT_EQ(OlaOf(**ba)->max_abs_held(), 1e250) << "the build's largest |a|";
  std::vector<IndexedValue> updates;
  for (int k = 0; k < 500; ++k) {
    const uint64_t i = rng() % kLength;
    if (i == kSpikeAt || i == kSpikeAt + 7) continue;
    const double v = std::normal_distribution<double>(0, 10)(rng);
    a[i] = v;
    updates.push_back({i, Value::Float(v)});
  }
  a[kSpikeAt] = 1.5;  // the spike replaced: a value far below what the cell held
  updates.push_back({kSpikeAt, Value::Float(1.5)});
  a[kSpikeAt + 7] = -2.5;
  updates.push_back({kSpikeAt + 7, Value::Float(-2.5)});
  ASSERT_OK((*ba)->Apply(updates));
  EXPECT_EQ(OlaOf(**ba)->max_abs_held(), 1e250) << "never lowered by an update";
  EXPECT_GT(ExpectSound(**ba, a, kSpikeAt - 300, kSpikeAt + 300), 0) << "through the levels after updates";
  ExpectSoundRanges(**ba, a, rng, /*ola=*/true);
}

// An update above every value held raises max_abs_held before its slots
// change, and the raised value is what the file holds when opened again.
TEST(OlaProgressiveTest, AnUpdateRaisesTheLargestValueHeldDurably) {
  std::mt19937_64 rng(testing::TestSeed());
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  auto a = WrittenData(path, "random", rng);
  double largest = 0;
  for (double v : a) largest = std::max(largest, std::fabs(v));
  {
    auto ba = BufferedArray::Open(path, Options(2, 16));
    ASSERT_OK(ba);
    EXPECT_EQ(OlaOf(**ba)->max_abs_held(), largest);
    a[123] = -7e10;
    const std::vector<IndexedValue> raise = {{123, Value::Float(-7e10)}};
    ASSERT_OK((*ba)->Apply(raise));
    EXPECT_EQ(OlaOf(**ba)->max_abs_held(), 7e10);
    a[123] = 0.25;
    const std::vector<IndexedValue> lower = {{123, Value::Float(0.25)}};
    ASSERT_OK((*ba)->Apply(lower));
    ASSERT_OK((*ba)->Close());
  }
  auto ba = BufferedArray::Open(path, Options(2, 16));
  ASSERT_OK(ba);
  EXPECT_EQ(OlaOf(**ba)->max_abs_held(), 7e10) << "sealed into the clean header at the checkpoint";
  EXPECT_GT(ExpectSound(**ba, a, 100, 30000), 0);
}

}  // namespace
}  // namespace momenta
