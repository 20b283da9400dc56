// Progressive sums (buffers/algebra/range_bounds.h, buffers/tree/progressive_sum.h): every
// interval — the first, from the nodes alone, and each after a piece of an end
// leaf is read — contains the exact sum (a long-double scan of the cells; an
// exact Int128 one for integer dtypes), and the mean's interval the exact
// mean, on adversarial data: alternating signs, one 1e300 spike inside a
// partial end leaf, all-negative data, NaN and infinities, integer dtypes at
// the ends of their range, 1e9 + N(0, 1), and random data and ranges (the
// seed printed). The first bound reads no byte of the array (a backend that
// fails every read still gives it), the intervals only narrow, and the last
// one holds the ordinary query's answer. Each of those bounds' pieces also
// bounds Σa² and the rms (buffers/algebra/square_bounds.h) around the exact answers.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "buffers/algebra/range_bounds.h"
#include "buffers/algebra/square_bounds.h"
#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/progressive_sum.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
using testing::ScratchDir;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The exact answer as np.sum gives it: NaN when a NaN or both infinities are
// inside, ±inf for one infinity, else the long-double sum of the cells.
struct Exact {
  bool nan = false;
  ld sum = 0;
  bool is_integer = false;  // an integer dtype: `integer` is the sum
  Int128 integer = 0;
};

Exact Reference(const std::vector<Value>& a, uint64_t p, uint64_t q) {
  Exact e;
  bool nan = false, pos = false, neg = false;
  for (uint64_t i = p; i < q; ++i) {
    const Value& v = a[i];
    e.is_integer = v.kind != Value::Kind::kFloat;
    if (v.kind == Value::Kind::kInt)
      e.integer += v.i;
    else if (v.kind == Value::Kind::kUInt)
      e.integer += static_cast<Int128>(v.u);
    if (v.kind == Value::Kind::kFloat && std::isnan(v.f))
      nan = true;
    else if (v.kind == Value::Kind::kFloat && std::isinf(v.f))
      (v.f > 0 ? pos : neg) = true;
    else
      e.sum += v.AsLongDouble();
  }
  if (nan || (pos && neg))
    e.nan = true;
  else if (pos)
    e.sum = kInf;
  else if (neg)
    e.sum = -kInf;
  return e;
}

std::string Describe(const SumBound& b) {
  return "estimate " + std::to_string(b.estimate) + " in [" + std::to_string(b.lower) + ", " + std::to_string(b.upper) +
         "] nan " + std::to_string(static_cast<int>(b.nan)) + (b.exact ? " exact" : "") +
         (b.is_integer ? " int [" + Int128ToString(b.int_lower) + ", " + Int128ToString(b.int_upper) + "]" : "");
}

// The bound holds the exact answer (sum, or mean = sum / n).
void ExpectHolds(const SumBound& b, const Exact& e, ld divisor, const std::string& what) {
  SCOPED_TRACE(what + ": " + Describe(b));
  if (e.nan) {
    EXPECT_NE(b.nan, NanState::kNo) << "the answer is NaN but the bound says it cannot be";
    return;
  }
  ASSERT_NE(b.nan, NanState::kCertain) << "the bound says NaN; the answer is " << static_cast<double>(e.sum);
  if (b.is_integer) {
    EXPECT_LE(b.int_lower, e.integer);
    EXPECT_GE(b.int_upper, e.integer);
    EXPECT_LE(b.int_lower, b.int_estimate);
    EXPECT_LE(b.int_estimate, b.int_upper);
  }
  // An integer sum past 2^64 rounds as a long double: the exact mean is
  // then between the quotients of its two neighbors.
  ld exact = e.sum / divisor, exact_low = exact, exact_high = exact;
  if (e.is_integer) {
    const ld v = static_cast<ld>(e.integer);
    const ld below = static_cast<Int128>(v) > e.integer ? std::nextafter(v, -kInf) : v;
    const ld above = static_cast<Int128>(v) < e.integer ? std::nextafter(v, kInf) : v;
    exact = v / divisor;
    exact_low = std::nextafter(below / divisor, -kInf);
    exact_high = std::nextafter(above / divisor, kInf);
    if (divisor == 1) exact_low = exact_high = exact = v;
  }
  EXPECT_LE(static_cast<ld>(b.lower), exact_low) << "exact " << static_cast<double>(exact);
  EXPECT_GE(static_cast<ld>(b.upper), exact_high) << "exact " << static_cast<double>(exact);
  EXPECT_LE(b.lower, b.estimate);
  EXPECT_LE(b.estimate, b.upper);
}

// The bound on Σa² (square_bounds.h) over the same pieces holds np.sum(x**2)
// with x**2 exact (long double; its own rounding allowed), and the rms bound
// sqrt(Σa²/n).
void ExpectSquaresHold(const ProgressiveSum& ps, const std::vector<Value>& a, uint64_t p, uint64_t q,
                       const std::string& what) {
  bool nan = false, inf = false;
  ld exact = 0;
  for (uint64_t i = p; i < q; ++i) {
    const ld x = a[i].AsLongDouble();
    if (std::isnan(x))
      nan = true;
    else if (std::isinf(x))
      inf = true;
    else
      exact += x * x;
  }
  const SumBound b = BoundSumOfSquares(ps.whole(), ps.ends());
  SCOPED_TRACE(what + " sumsq: " + Describe(b) + " exact " + std::to_string(static_cast<double>(exact)));
  if (nan) {
    EXPECT_NE(b.nan, NanState::kNo);
    return;
  }
  ASSERT_NE(b.nan, NanState::kCertain);
  if (inf) {
    EXPECT_EQ(b.upper, HUGE_VAL);
    return;
  }
  const ld rounding = static_cast<ld>(q - p + 2) * 0x1p-64L * exact;  // the reference's own
  EXPECT_LE(static_cast<ld>(b.lower), exact + rounding);
  EXPECT_GE(static_cast<ld>(b.upper), exact - rounding);
  EXPECT_LE(b.lower, b.estimate);
  EXPECT_LE(b.estimate, b.upper);
  if (q == p) return;
  const SumBound r = BoundRms(b, q - p);
  const ld rms = std::sqrt(exact / static_cast<ld>(q - p));
  EXPECT_LE(static_cast<ld>(r.lower), rms * (1 + rounding / (exact + 1e-300L))) << "rms";
  EXPECT_GE(static_cast<ld>(r.upper), rms * (1 - rounding / (exact + 1e-300L))) << "rms";
}

struct Fixture {
  ScratchDir dir;
  std::vector<Value> a;
  std::unique_ptr<BufferedArray> ba;
};

// An array of `t` holding `a`, its buffer of leaves of `leaf_span` cells
// (fan-out 4, most levels in the disk tier).
void Make(Fixture& f, DType t, uint64_t leaf_span = 64, bool writable = false) {
  const std::string path = f.dir.File("a.npy");
  {
    IoOptions io;
    io.writable = true;
    io.kind = IoKind::kPread;
    const uint64_t shape[] = {f.a.size()};
    auto file = ArrayFile::Create(path, t, shape, io);
    ASSERT_OK(file);
    ASSERT_OK((*file)->WriteValues(0, f.a));
  }
  BufferedArrayOptions options;
  options.io.kind = IoKind::kPread;
  options.io.writable = writable;
  options.tree.order = 2;
  options.tree.leaf_span = leaf_span;
  options.tree.fanout = 4;
  options.tree.ram_budget = 1024;
  auto opened = BufferedArray::Open(path, options);
  ASSERT_OK(opened);
  f.ba = std::move(opened).value();
}

// Every bound of [p, q) — first, each refinement, last — holds the exact sum
// and mean; they only narrow; the last holds the ordinary query's answer.
void CheckRange(Fixture& f, uint64_t p, uint64_t q, ProgressiveSum::Options options = {}) {
  const std::string what = "range " + std::to_string(p) + ":" + std::to_string(q);
  const Exact e = Reference(f.a, p, q);
  ProgressiveSum ps(TreeOf(*f.ba), f.ba->array(), p, q, nullptr, options);
  auto bound = ps.Start();
  ASSERT_OK(bound);
  EXPECT_EQ(ps.array_bytes_read(), 0u);
  SumBound previous = *bound;
  for (int step = 0;; ++step) {
    ExpectHolds(*bound, e, 1, what + " sum, step " + std::to_string(step));
    if (q > p)
      ExpectHolds(BoundMean(*bound, q - p), e, static_cast<ld>(q - p), what + " mean, step " + std::to_string(step));
    ExpectSquaresHold(ps, f.a, p, q, what + " step " + std::to_string(step));
    if (::testing::Test::HasFailure()) return;
    if (bound->nan != NanState::kCertain && previous.nan != NanState::kCertain) {
      EXPECT_GE(bound->lower, previous.lower) << what << " widened";
      EXPECT_LE(bound->upper, previous.upper) << what << " widened";
    }
    previous = *bound;
    if (ps.done()) break;
    bound = ps.Next();
    ASSERT_OK(bound);
  }
  EXPECT_TRUE(bound->exact || bound->nan != NanState::kNo || std::isinf(bound->lower))
      << what << ": " << Describe(*bound);
  // The ordinary query's answer lies in the last interval.
  auto summary = f.ba->Summarize(p, q, false);
  ASSERT_OK(summary);
  auto sum = ComputeStat(Stat::kSum, {}, *summary, p, f.ba->array().dtype());
  ASSERT_OK(sum);
  // (It may sit outside the last interval by its own rounding, which the
  // buffer's bound allows: within 1e-9 of Σ|a| over the range with its two
  // end leaves whole, DESIGN.md §5.)
  if (bound->nan == NanState::kNo && bound->exact && !bound->is_integer && std::isfinite(bound->lower) &&
      std::isfinite(bound->upper) && q > p) {
    const uint64_t span = TreeOf(*f.ba).layout().leaf_span();
    ld scale = 0;
    for (uint64_t i = p / span * span; i < std::min<uint64_t>(f.a.size(), ((q - 1) / span + 1) * span); ++i)
      if (std::isfinite(f.a[i].AsLongDouble())) scale += std::fabs(f.a[i].AsLongDouble());
    EXPECT_LE(static_cast<ld>(bound->lower) - 1e-9L * scale, sum->values[0]) << what;
    EXPECT_GE(static_cast<ld>(bound->upper) + 1e-9L * scale, sum->values[0]) << what;
  }
  if (bound->is_integer && bound->exact) {
    EXPECT_EQ(sum->integer, bound->int_estimate) << what;
  }
}

// Random ranges (and every kind of end: inside one leaf, aligned, whole array).
void CheckRandomRanges(Fixture& f, std::mt19937_64& rng, int count) {
  const uint64_t n = f.a.size();
  auto in = [n](uint64_t i) { return std::min(i, n); };
  CheckRange(f, 0, n);
  CheckRange(f, 0, 0);
  CheckRange(f, in(64), in(128));
  CheckRange(f, in(3), in(61));
  CheckRange(f, in(70), in(1000));
  for (int k = 0; k < count && !::testing::Test::HasFailure(); ++k) {
    uint64_t p = rng() % (n + 1), q = rng() % (n + 1);
    if (p > q) std::swap(p, q);
    ProgressiveSum::Options options;
    options.min_piece = 1 + rng() % 20;
    options.pieces_per_end = 1 + rng() % 6;
    CheckRange(f, p, q, options);
  }
}

std::string SeedTrace(uint64_t seed) { return "MOMENTA_SEED=" + std::to_string(seed) + " reproduces"; }

TEST(RangeBoundsTest, AlternatingSigns) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  for (uint64_t i = 0; i < 3000; ++i)
    f.a.push_back(Value::Float((i % 2 ? -1.0 : 1.0) * (1e6 + static_cast<double>(i % 7))));
  Make(f, DType::kF8);
  CheckRandomRanges(f, rng, 200);
}

TEST(RangeBoundsTest, SpikeInsideAPartialLeaf) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  std::normal_distribution<double> normal(0, 1);
  for (uint64_t i = 0; i < 3000; ++i) f.a.push_back(Value::Float(normal(rng)));
  f.a[64 * 5 + 17] = Value::Float(1e300);    // leaf 5
  f.a[64 * 20 + 60] = Value::Float(-1e300);  // leaf 20
  Make(f, DType::kF8);
  // Ends in the spike's leaf, the spike inside and outside the range.
  for (uint64_t p : {320u, 330u, 337u, 338u, 350u, 383u})
    for (uint64_t q : {338u, 384u, 1300u, 1340u, 1341u, 1343u, 2000u})
      if (p <= q) {
        CheckRange(f, p, q);
      }
  CheckRandomRanges(f, rng, 150);
}

// After updates a node's rounding is at the magnitudes it has held: here
// cells around a 1e300 spike (which stays the leaf's max, so nothing is
// recomputed) are raised to 9e299 and lowered back, and the intervals must
// still hold (the allowance falls back to f · max|a|). (Making the tighter,
// build-time allowance fail would take ~10^10 / f such updates of a node of
// f cells: this checks the updated path is sound, not that it is needed.)
TEST(RangeBoundsTest, AfterUpdates) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  std::normal_distribution<double> normal(0, 1);
  for (uint64_t i = 0; i < 3000; ++i) f.a.push_back(Value::Float(normal(rng)));
  f.a[100] = Value::Float(1e300);
  Make(f, DType::kF8, 64, /*writable=*/true);
  for (int round = 0; round < 2; ++round) {
    std::vector<IndexedValue> ups;
    for (uint64_t i = 64; i < 128; ++i)
      if (i != 100) ups.push_back({i, Value::Float(round == 0 ? 9e299 : normal(rng))});
    for (int k = 0; k < 200; ++k) ups.push_back({200 + rng() % 2800, Value::Float(normal(rng) * 1e3)});
    ASSERT_OK(f.ba->Apply(ups));
    for (const IndexedValue& u : ups) f.a[u.index] = u.value;
  }
  ASSERT_GT(TreeOf(*f.ba).header().updates_since_build, 0u);
  for (uint64_t p : {64u, 70u, 99u, 101u, 127u})
    for (uint64_t q : {101u, 128u, 130u, 1000u, 3000u})
      if (p <= q) {
        CheckRange(f, p, q);
      }
  CheckRandomRanges(f, rng, 150);
}

TEST(RangeBoundsTest, AllNegative) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  std::uniform_real_distribution<double> u(1, 2);
  for (uint64_t i = 0; i < 3000; ++i) f.a.push_back(Value::Float(-1e6 * u(rng)));
  Make(f, DType::kF8);
  CheckRandomRanges(f, rng, 200);
}

TEST(RangeBoundsTest, LargeMeanSmallSpread) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  std::normal_distribution<double> normal(1e9, 1);
  for (uint64_t i = 0; i < 3000; ++i) f.a.push_back(Value::Float(normal(rng)));
  Make(f, DType::kF8);
  CheckRandomRanges(f, rng, 200);
}

TEST(RangeBoundsTest, NanAndInfinity) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  std::normal_distribution<double> normal(3, 100);
  for (uint64_t i = 0; i < 3000; ++i) {
    const uint64_t r = rng() % 400;
    f.a.push_back(Value::Float(r == 0 ? std::nan("") : r == 1 ? kInf : r == 2 ? -kInf : normal(rng)));
  }
  for (uint64_t i = 200; i < 216; ++i) f.a[i] = Value::Float(kInf);  // +inf inside leaf 3
  for (uint64_t i = 700; i < 705; ++i) f.a[i] = Value::Float(std::nan(""));
  Make(f, DType::kF8);
  CheckRange(f, 190, 250);  // +inf certainly inside (16 of the leaf's 64, 10 outside at most)
  CheckRange(f, 210, 1000);
  CheckRange(f, 702, 703);
  CheckRandomRanges(f, rng, 300);
}

TEST(RangeBoundsTest, IntegerDtypes) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  struct Case {
    DType t;
    std::function<Value()> cell;
  };
  const int64_t big = std::numeric_limits<int64_t>::max();
  const std::vector<Case> cases = {
      {DType::kI8,
       [&] { return Value::Int(rng() % 3 == 0 ? (rng() % 2 ? big : -big - 1) : static_cast<int64_t>(rng())); }},
      {DType::kU8,
       [&] { return Value::UInt(rng() % 2 ? std::numeric_limits<uint64_t>::max() - rng() % 5 : rng() % 1000); }},
      {DType::kI4, [&] { return Value::Int(static_cast<int32_t>(rng())); }},
      {DType::kU1, [&] { return Value::UInt(rng() % 256); }},
      {DType::kI2, [&] { return Value::Int(-static_cast<int64_t>(rng() % 32768)); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string("dtype ") + std::string(DTypeName(c.t)));
    Fixture f;
    for (uint64_t i = 0; i < 2500; ++i) f.a.push_back(c.cell());
    Make(f, c.t);
    CheckRandomRanges(f, rng, 120);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(RangeBoundsTest, RandomDataAndLeaves) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 4 && !::testing::Test::HasFailure(); ++round) {
    Fixture f;
    const uint64_t n = 1 + rng() % 5000;
    const double scale = std::pow(10.0, static_cast<double>(rng() % 40) - 20);
    const double mean = (rng() % 3 == 0) ? 0 : scale * static_cast<double>(rng() % 2000) - scale * 1000;
    std::normal_distribution<double> normal(mean, scale);
    for (uint64_t i = 0; i < n; ++i) f.a.push_back(Value::Float(normal(rng)));
    Make(f, DType::kF8, uint64_t{16} << (rng() % 4));
    CheckRandomRanges(f, rng, 150);
  }
}

// The first interval is worth having: for 1e9 + N(0, 1) data the spread
// bound holds each partial end to 2·sqrt(k(n−k)C/n) (C ≈ n σ²: about 46 + 63 here),
// where min/max alone would allow k·(max − min), several hundred. (Whole
// nodes would add their allowance, 1e-9 · f · max|a| each: this range has none.)
TEST(RangeBoundsTest, FirstIntervalIsNarrow) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  Fixture f;
  std::normal_distribution<double> normal(1e9, 1);
  for (uint64_t i = 0; i < 3000; ++i) f.a.push_back(Value::Float(normal(rng)));
  Make(f, DType::kF8);
  ProgressiveSum ps(TreeOf(*f.ba), f.ba->array(), 10, 100);  // 54 cells of leaf 0, 36 of leaf 1
  auto first = ps.Start();
  ASSERT_OK(first);
  EXPECT_LT(first->upper - first->lower, 150) << Describe(*first);
}

// The first estimate of a leaf not yet read integrates the polynomial its
// index moments fit: exact for data that is a quadratic in the index.
TEST(RangeBoundsTest, EstimateFollowsTheLeafsTrend) {
  Fixture f;
  for (uint64_t i = 0; i < 3000; ++i)
    f.a.push_back(Value::Float(3.0 + 0.5 * static_cast<double>(i) - 1e-3 * static_cast<double>(i * i)));
  Make(f, DType::kF8);
  for (auto [p, q] : {std::pair<uint64_t, uint64_t>{10, 50}, {70, 1000}, {1000, 2990}}) {
    ProgressiveSum ps(TreeOf(*f.ba), f.ba->array(), p, q);
    auto first = ps.Start();
    ASSERT_OK(first);
    const Exact e = Reference(f.a, p, q);
    EXPECT_NEAR(first->estimate, static_cast<double>(e.sum), 1e-9 * std::fabs(static_cast<double>(e.sum)) + 1e-6)
        << p << ":" << q << " " << Describe(*first);
  }
}

// The first bound comes from the nodes alone: with an array backend that
// fails every read, Start still answers; Next then fails, naming the read.
TEST(RangeBoundsTest, StartReadsNoArrayByte) {
  class RefusingBackend final : public IoBackend {
   public:
    explicit RefusingBackend(std::string path) : IoBackend(std::move(path)) {}
    std::string Name() const override { return "refusing"; }
    Status Read(uint64_t, size_t, char*) override {
      ++reads;
      return Status::IOError(path(), "read refused by the test");
    }
    Status Write(uint64_t, std::span<const char>) override { return Status::IOError(path(), "no"); }
    Status Allocate(uint64_t, uint64_t) override { return Status::OK(); }
    Status Sync() override { return Status::OK(); }
    Result<uint64_t> Size() override { return uint64_t{0}; }
    int reads = 0;
  };
  Fixture f;
  for (uint64_t i = 0; i < 1000; ++i) f.a.push_back(Value::Float(static_cast<double>(i)));
  Make(f, DType::kF8);
  RefusingBackend refusing(f.ba->array().path());
  ProgressiveSum ps(TreeOf(*f.ba), f.ba->array(), 10, 990, &refusing);
  auto first = ps.Start();
  ASSERT_OK(first);
  EXPECT_EQ(refusing.reads, 0);
  EXPECT_LE(first->lower, 489555.0);  // Σ 10..989
  EXPECT_GE(first->upper, 489555.0);
  ASSERT_FALSE(ps.done());
  auto next = ps.Next();
  EXPECT_FALSE(next.ok());
  EXPECT_EQ(refusing.reads, 1);
}

// Outward rounding: the double bounds of a long double never cut it.
TEST(RangeBoundsTest, DoubleBelowAndAbove) {
  const ld x = 1.0L + 0x1p-60L;
  EXPECT_LE(static_cast<ld>(DoubleBelow(x)), x);
  EXPECT_GE(static_cast<ld>(DoubleAbove(x)), x);
  EXPECT_LT(DoubleBelow(x), DoubleAbove(x));
  EXPECT_EQ(DoubleBelow(2.0L), 2.0);
  EXPECT_EQ(DoubleAbove(2.0L), 2.0);
  EXPECT_EQ(DoubleBelow(1e400L), std::numeric_limits<double>::max());
  EXPECT_EQ(DoubleAbove(1e400L), kInf);
  EXPECT_TRUE(std::isnan(DoubleBelow(std::numeric_limits<ld>::quiet_NaN())));
}

}  // namespace
}  // namespace momenta
