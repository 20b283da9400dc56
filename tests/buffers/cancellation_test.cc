// Cancellation: the moment tree subtracts large sums in two places — a
// partial end leaf answered as the leaf's stored summary minus its
// complement's (the shorter side, range_query.cc), and updates applied to
// nodes as deltas (a spike added, then taken away again). These tests put
// large values exactly where such a subtraction would cancel them: spikes
// (±1e12..1e15 among N(0, 1)) in the complement of an end leaf, in a node an
// update later clears, and a 1e9 mean under N(0, 1) noise. Every statistic
// is checked against a long-double scan of the current values, with the
// accuracy bound (docs/accuracy.md) taken over the range ALONE: nothing
// outside [p, q), and no value a cell no longer holds, may reach the answer's
// error. Without the guards (the direct read of a part whose complement would
// cancel its variance; the drift refresh of a node an update cleared) these
// tests fail.
#include "buffers/buffered_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array_parts.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr long double kBound = kReferenceRelativeError;  // 1e-9
constexpr uint64_t kLeaf = 256;
constexpr uint32_t kFanout = 8;
constexpr uint64_t kLength = uint64_t{1} << 16;  // 256 leaves, three levels
// Spikes sit in every 16th leaf at an offset below half a leaf ("low") and
// 8 leaves later at an offset above it ("high"); the leaves between stay
// clean, so a range from just after a low spike to just before a high one
// holds none, while both its end leaves' shorter complements do.
constexpr uint64_t kSpikeEvery = 16;

struct Data {
  double base = 0;      // every cell is base + N(0, 1) ...
  bool spikes = false;  // ... but the spike cells, ±10^U(12, 15)
};

std::string Name(const Data& d) { return std::string(d.base != 0 ? "mean1e9" : "mean0") + (d.spikes ? "_spikes" : ""); }

double Noise(const Data& d, std::mt19937_64& rng) { return d.base + std::normal_distribution<double>(0, 1)(rng); }
double Spike(std::mt19937_64& rng) {
  const double magnitude = std::pow(10.0, std::uniform_real_distribution<double>(12, 15)(rng));
  return (rng() & 1) ? magnitude : -magnitude;
}
// A spike's offset within its leaf: below half a leaf in low leaves, above
// it in high ones (at least 8 cells from the threshold).
uint64_t SpikeOffset(bool low, std::mt19937_64& rng) {
  return low ? rng() % (kLeaf / 2 - 8) : kLeaf / 2 + 8 + rng() % (kLeaf / 2 - 8);
}

// The array's cells as the test last wrote them, and the spikes' places.
struct Model {
  Data data;
  std::vector<double> a;
  std::vector<uint64_t> low_spike, high_spike;  // per group of kSpikeEvery leaves

  uint64_t groups() const { return kLength / kLeaf / kSpikeEvery; }
};

// ---- the exact reference ---------------------------------------------------

// Σ (i − c)^k a_i over [p, q) and its bound's magnitude Σ (|i − p| + |p − c|)^k |a_i|
// over [p, q) alone (DESIGN.md §5's form, without widening to the end leaves
// and with the values the cells hold now).
struct Exact {
  long double value = 0, magnitude = 0;
};
// x^k by repeated products (std::pow of a long double made the scans slow).
long double Power(long double x, int k) {
  long double r = 1;
  for (int j = 0; j < k; ++j) r *= x;
  return r;
}
Exact MomentOf(const std::vector<double>& a, uint64_t p, uint64_t q, int k, long double c) {
  Exact e;
  const long double shift = std::fabs(static_cast<long double>(p) - c);
  for (uint64_t i = p; i < q; ++i) {
    const long double x = static_cast<long double>(i);
    const long double v = Power(x - c, k) * a[i];
    e.value += v;
    e.magnitude += Power((x - p) + shift, k) * std::fabs(static_cast<long double>(a[i]));
  }
  return e;
}

// Gauss-Jordan inverse of a small symmetric positive definite matrix, in long double.
template <size_t N>
std::array<std::array<long double, N>, N> Inverse(std::array<std::array<long double, N>, N> m, size_t n) {
  std::array<std::array<long double, N>, N> inv{};
  for (size_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (size_t col = 0; col < n; ++col) {
    const long double pivot = m[col][col];
    for (size_t j = 0; j < n; ++j) {
      m[col][j] /= pivot;
      inv[col][j] /= pivot;
    }
    for (size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const long double f = m[r][col];
      for (size_t j = 0; j < n; ++j) {
        m[r][j] -= f * m[col][j];
        inv[r][j] -= f * inv[col][j];
      }
    }
  }
  return inv;
}

// ---- the check of every statistic --------------------------------------------

long double Answer(Stat stat, const StatParams& params, const RangeSummary& s, uint64_t p, size_t entry = 0) {
  auto r = ComputeStat(stat, params, s, p, DType::kF8);
  EXPECT_TRUE(r.ok()) << StatName(stat) << ": " << r.status().ToString();
  if (!r.ok() || r->values.size() <= entry) return NAN;
  return r->values[entry];
}

#define EXPECT_WITHIN(got, want, bound, what)                                                                  \
  EXPECT_LE(std::fabs((got) - (want)), (bound))                                                                \
      << (what) << ": got " << static_cast<double>(got) << " want " << static_cast<double>(want) << " (error " \
      << static_cast<double>(std::fabs((got) - (want))) << ", bound " << static_cast<double>(bound) << ")"

// The index statistics: moments of every order about p, the middle and a
// random center; the center of mass; the polynomial fits.
void CheckIndexStats(const RangeSummary& s, const std::vector<double>& a, uint64_t p, uint64_t q, int order,
                     std::mt19937_64& rng) {
  const long double centers[] = {static_cast<long double>(p), (p + q - 1) / 2.0L,
                                 static_cast<long double>(p + rng() % (q - p)) + 0.25L};
  for (long double c : centers) {
    StatParams params;
    params.about = c;
    params.order = order;
    for (int k = 0; k <= order; ++k) {
      const Exact e = MomentOf(a, p, q, k, c);
      const std::string what = "moment " + std::to_string(k) + " about " + std::to_string(static_cast<double>(c));
      EXPECT_WITHIN(Answer(Stat::kMoments, params, s, p, k), e.value, kBound * e.magnitude, what);
      StatParams one = params;
      one.order = k;
      EXPECT_WITHIN(Answer(Stat::kMoment, one, s, p), e.value, kBound * e.magnitude, what + " (moment)");
    }
  }
  // com = p + M1/M0: |Δ| <= (B1 + |M1/M0|·B0) / (|M0| − B0), where M0 is not near 0.
  const Exact m0 = MomentOf(a, p, q, 0, p), m1 = MomentOf(a, p, q, 1, p);
  const long double b0 = kBound * m0.magnitude, b1 = kBound * m1.magnitude;
  if (std::fabs(m0.value) > 4 * b0) {
    const long double com = p + m1.value / m0.value;
    const long double bound = (b1 + std::fabs(m1.value / m0.value) * b0) / (std::fabs(m0.value) - b0);
    EXPECT_WITHIN(Answer(Stat::kCom, {}, s, p), com, bound * (1 + 1e-12L) + 1e-15L * com, "com");
  }
  // polyfit: the normal equations G c = m in t = x / w; each moment m_l
  // within B_l, so each coefficient within Σ_l |G^-1|_kl B_l (plus the
  // solver's own rounding, ~1e-15 of Σ_l |G^-1|_kl |m_l| at these degrees).
  const uint64_t w = q - p;
  for (int degree = 1; degree <= std::min(order, 3); ++degree) {
    if (w <= static_cast<uint64_t>(degree)) continue;
    const size_t n = degree + 1;
    std::array<long double, 7> powers{};  // Σ t^m, m = 0..2·degree
    for (uint64_t x = 0; x < w; ++x) {
      const long double t = static_cast<long double>(x) / w;
      long double tm = 1;
      for (size_t m = 0; m <= 2 * static_cast<size_t>(degree); ++m, tm *= t) powers[m] += tm;
    }
    std::array<std::array<long double, 4>, 4> g{};
    for (size_t k = 0; k < n; ++k)
      for (size_t l = 0; l < n; ++l) g[k][l] = powers[k + l];
    const auto inv = Inverse(g, n);
    std::array<long double, 4> rhs{}, err{};
    for (size_t l = 0; l < n; ++l) {
      const Exact e = MomentOf(a, p, q, static_cast<int>(l), p);
      const long double scale = std::pow(static_cast<long double>(w), static_cast<int>(l));
      rhs[l] = e.value / scale;
      err[l] = kBound * e.magnitude / scale;
    }
    StatParams params;
    params.degree = degree;
    for (size_t k = 0; k < n; ++k) {
      long double want = 0, bound = 0, size = 0;
      for (size_t l = 0; l < n; ++l) {
        want += inv[k][l] * rhs[l];
        bound += std::fabs(inv[k][l]) * err[l];
        size += std::fabs(inv[k][l]) * std::fabs(rhs[l]);
      }
      const long double scale = std::pow(static_cast<long double>(w), static_cast<int>(k));
      EXPECT_WITHIN(Answer(Stat::kPolyfit, params, s, p, k) * scale, want, bound + 1e-15L * size,
                    "polyfit degree " + std::to_string(degree) + " coefficient " + std::to_string(k));
    }
  }
}

// Every statistic of [p, q) (q − p >= 2), answered from `s`, against the scan of `a`.
void CheckSummary(const RangeSummary& s, const std::vector<double>& a, uint64_t p, uint64_t q, int order,
                  std::mt19937_64& rng) {
  SCOPED_TRACE("range " + std::to_string(p) + ":" + std::to_string(q) + " (ends at leaf offsets " +
               std::to_string(p % kLeaf) + ", " + std::to_string(q % kLeaf) + ")");
  ASSERT_EQ(s.count(), q - p);
  const long double n = q - p;
  long double sum = 0, abs_sum = 0, sumsq = 0;
  for (uint64_t i = p; i < q; ++i) {
    sum += a[i];
    abs_sum += std::fabs(static_cast<long double>(a[i]));
    sumsq += static_cast<long double>(a[i]) * a[i];
  }
  const long double mean = sum / n;
  long double central = 0;
  for (uint64_t i = p; i < q; ++i) central += (a[i] - mean) * (a[i] - mean);
  const long double var = central / n;
  EXPECT_WITHIN(Answer(Stat::kSum, {}, s, p), sum, kBound * abs_sum, "sum");
  EXPECT_WITHIN(Answer(Stat::kMean, {}, s, p), mean, kBound * abs_sum / n, "mean");
  EXPECT_WITHIN(Answer(Stat::kVar, {}, s, p), var, kBound * var, "var");
  EXPECT_WITHIN(Answer(Stat::kStd, {}, s, p), std::sqrt(var), kBound * std::sqrt(var), "std");
  EXPECT_WITHIN(Answer(Stat::kSumsq, {}, s, p), sumsq, kBound * sumsq, "sumsq");
  EXPECT_WITHIN(Answer(Stat::kRms, {}, s, p), std::sqrt(sumsq / n), kBound * std::sqrt(sumsq / n), "rms");
  CheckIndexStats(s, a, p, q, order, rng);
}

// The same for the query's own answer (need_extremes false: the shorter side
// may be taken).
void CheckEveryStat(BufferedArray& ba, const std::vector<double>& a, uint64_t p, uint64_t q, int order,
                    std::mt19937_64& rng) {
  auto summary = ba.Summarize(p, q, /*need_extremes=*/false);
  ASSERT_OK(summary);
  CheckSummary(*summary, a, p, q, order, rng);
}

// ---- the ranges --------------------------------------------------------------

struct Range {
  uint64_t p, q;
};

// Ranges whose ends fall anywhere in a leaf: random ones, ones at and around
// the half-leaf threshold (where the shorter side switches), and, in the
// spike model, ones whose end leaves' shorter complements hold the spikes
// while the range between holds none (and some that hold spikes too).
std::vector<Range> Ranges(const Model& m, std::mt19937_64& rng) {
  std::vector<Range> out;
  const uint64_t leaves = kLength / kLeaf;
  auto add = [&](uint64_t p, uint64_t q) {
    p = std::min(p, kLength - 2);
    q = std::min(q, kLength);
    if (q >= p + 2) out.push_back({p, q});
  };
  for (int k = 0; k < 12; ++k) {
    const uint64_t p = rng() % kLength, q = rng() % kLength;
    add(std::min(p, q), std::max(p, q));
  }
  for (int k = 0; k < 12; ++k) {
    const uint64_t lp = rng() % (leaves - 2), lq = lp + 1 + rng() % (leaves - lp - 1);
    const uint64_t op = kLeaf / 2 - 2 + rng() % 4, oq = kLeaf / 2 - 2 + rng() % 4;  // both sides of half a leaf
    add(lp * kLeaf + op, lq * kLeaf + oq);
  }
  if (!m.data.spikes) return out;
  for (uint64_t g = 0; g < m.groups(); ++g) {
    const uint64_t low = m.low_spike[g], high = m.high_spike[g];
    const uint64_t low_end = low / kLeaf * kLeaf + kLeaf / 2;    // first offset read directly
    const uint64_t high_end = high / kLeaf * kLeaf + kLeaf / 2;  // last offset read directly
    // After the low spike, before the high one: complements [leaf, p) and
    // [q, leaf end) hold the spikes, the range none.
    const uint64_t p = low + 1 + rng() % (low_end - low - 1);
    const uint64_t q = high_end + 1 + rng() % (high - high_end);
    add(p, q);
    // The same ends with whole groups between (spikes inside the range too).
    if (g + 1 < m.groups()) add(p, m.high_spike[g + 1]);
    // The other side of the threshold: read directly.
    add(low_end + rng() % (kLeaf / 2), high_end - rng() % (kLeaf / 2));
  }
  return out;
}

// ---- the arrays --------------------------------------------------------------

Model Make(const Data& d, std::mt19937_64& rng) {
  Model m;
  m.data = d;
  m.a.resize(kLength);
  for (double& x : m.a) x = Noise(d, rng);
  if (d.spikes) {
    for (uint64_t g = 0; g < m.groups(); ++g) {
      const uint64_t first = g * kSpikeEvery * kLeaf;
      m.low_spike.push_back(first + SpikeOffset(true, rng));
      m.high_spike.push_back(first + kSpikeEvery / 2 * kLeaf + SpikeOffset(false, rng));
      m.a[m.low_spike.back()] = Spike(rng);
      m.a[m.high_spike.back()] = Spike(rng);
    }
  }
  return m;
}

Result<std::unique_ptr<BufferedArray>> Build(const std::string& path, const Model& m, int order) {
  MOMENTA_RETURN_IF_ERROR(testing::WriteF8Array(path, m.a));
  BufferedArrayOptions options;
  options.io.writable = true;
  options.tree.leaf_span = kLeaf;
  options.tree.fanout = kFanout;
  options.tree.order = order;
  return BufferedArray::Open(path, options);
}

// Sets the cells of `updates` in the array and the model, `batch` at a time
// (batches of 1 take the single-update path, larger ones the gathered deltas).
Status Update(BufferedArray& ba, Model& m, const std::vector<IndexedValue>& updates, size_t batch) {
  for (size_t at = 0; at < updates.size(); at += batch) {
    const size_t end = std::min(updates.size(), at + batch);
    MOMENTA_RETURN_IF_ERROR(ba.Apply({updates.data() + at, end - at}));
    for (size_t k = at; k < end; ++k) m.a[updates[k].index] = updates[k].value.f;
  }
  return Status::OK();
}

// ---- the tests ------------------------------------------------------------------

struct Case {
  Data data;
  int order;
};

void PrintTo(const Case& c, std::ostream* os) { *os << Name(c.data) << "_J" << c.order; }

class CancellationTest : public ::testing::TestWithParam<Case> {};

void CheckRanges(BufferedArray& ba, const Model& m, int order, std::mt19937_64& rng, const char* when) {
  SCOPED_TRACE(when);
  const std::vector<Range> ranges = Ranges(m, rng);
  for (const Range& r : ranges) {
    CheckEveryStat(ba, m.a, r.p, r.q, order, rng);
    if (::testing::Test::HasFailure()) return;  // one range's report is enough
  }
  // The batch path (Python's stats, --ranges) shares its reads across ranges.
  std::vector<IndexRange> batch;
  for (const Range& r : ranges) batch.push_back({r.p, r.q});
  std::vector<RangeSummary> summaries;
  ASSERT_OK(ba.SummarizeBatch(batch, /*need_extremes=*/false, &summaries));
  ASSERT_EQ(summaries.size(), ranges.size());
  for (size_t k = 0; k < ranges.size() && !::testing::Test::HasFailure(); ++k) {
    SCOPED_TRACE("in a batch");
    CheckSummary(summaries[k], m.a, ranges[k].p, ranges[k].q, order, rng);
  }
}

// After the build, then after streams of updates: noise rewritten (single
// updates and gathered deltas), the spikes moved to other complements, and
// transient spikes put into clean leaves and taken out again.
TEST_P(CancellationTest, EveryStatisticWithinTheBoundOfTheRangeAlone) {
  const Case c = GetParam();
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)");
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  Model m = Make(c.data, rng);
  auto ba = Build(dir.File("a.npy"), m, c.order);
  ASSERT_OK(ba);
  CheckRanges(**ba, m, c.order, rng, "after the build");

  // Noise rewritten: 4000 cells that hold no spike, one at a time and in batches.
  std::vector<IndexedValue> updates;
  while (updates.size() < 4000) {
    const uint64_t i = rng() % kLength;
    if (std::fabs(m.a[i]) > 1e11) continue;
    updates.push_back({i, Value::Float(Noise(c.data, rng))});
  }
  ASSERT_OK(Update(**ba, m, {updates.begin(), updates.begin() + 200}, 1));
  ASSERT_OK(Update(**ba, m, {updates.begin() + 200, updates.end()}, 500));
  CheckRanges(**ba, m, c.order, rng, "after 4000 updates of the noise");

  if (c.data.spikes) {
    // Each spike moved: the old cell back to noise, a new spike elsewhere in
    // the same side of another offset (the delta of a removed spike and of a
    // new one, both in an end leaf's complement).
    updates.clear();
    for (uint64_t g = 0; g < m.groups(); ++g) {
      for (uint64_t* spike : {&m.low_spike[g], &m.high_spike[g]}) {
        const bool low = spike == &m.low_spike[g];
        updates.push_back({*spike, Value::Float(Noise(c.data, rng))});
        *spike = *spike / kLeaf * kLeaf + SpikeOffset(low, rng);
        updates.push_back({*spike, Value::Float(Spike(rng))});
      }
    }
    ASSERT_OK(Update(**ba, m, updates, rng() % 2 ? 1 : 64));
    CheckRanges(**ba, m, c.order, rng, "after the spikes moved");
  }

  // Transient spikes in clean leaves (4 leaves after each low spike leaf):
  // put in, then taken out again by a later update. The nodes that held them
  // must answer as if they never had.
  std::vector<IndexedValue> in, out;
  const uint64_t groups = kLength / kLeaf / kSpikeEvery;
  for (uint64_t g = 0; g < groups; ++g) {
    const uint64_t i = (g * kSpikeEvery + 4) * kLeaf + rng() % kLeaf;
    in.push_back({i, Value::Float(Spike(rng))});
    out.push_back({i, Value::Float(Noise(c.data, rng))});
  }
  ASSERT_OK(Update(**ba, m, in, 1 + rng() % 8));
  CheckRanges(**ba, m, c.order, rng, "with transient spikes");
  ASSERT_OK(Update(**ba, m, out, 1 + rng() % 8));
  CheckRanges(**ba, m, c.order, rng, "after the transient spikes were taken out");
  for (const IndexedValue& u : out) {
    // Ranges over the cleared cell's leaf and its neighbours, ends anywhere.
    const uint64_t leaf = u.index / kLeaf;
    CheckEveryStat(**ba, m.a, leaf * kLeaf + rng() % kLeaf, (leaf + 1) * kLeaf + rng() % kLeaf, c.order, rng);
    CheckEveryStat(**ba, m.a, (leaf - 1) * kLeaf + rng() % kLeaf, (leaf + 2) * kLeaf + rng() % kLeaf, c.order, rng);
    if (HasFailure()) break;
  }
  auto report = (*ba)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Data, CancellationTest,
                         ::testing::Values(Case{{1e9, false}, 2}, Case{{0, true}, 2}, Case{{1e9, true}, 2},
                                           Case{{0, true}, 8}, Case{{1e9, false}, 8}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return Name(info.param.data) + "_J" + std::to_string(info.param.order);
                         });

}  // namespace
}  // namespace momenta
