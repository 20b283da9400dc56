// NaN and infinity, answered as NumPy answers them: random float arrays with
// NaN, +inf and -inf sprinkled (alone and in runs), random ranges, every
// statistic with and without skipna against references computed here in long
// double with NumPy's rules; updates that move cells between finite, NaN and
// ±inf; a node's counts against a recount after random transitions; and the
// CLI against real NumPy (text and JSON).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
using testing::ScratchDir;

constexpr ld kNaN = std::numeric_limits<ld>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)";
}

// A random cell: mostly normal(3, 100), sometimes NaN, +inf, -inf or 0.
double RandomCell(std::mt19937_64& rng, DType t) {
  const uint64_t r = rng() % 100;
  if (r < 4) return std::nan("");
  if (r < 6) return kInf;
  if (r < 8) return -kInf;
  if (r < 15) return 0.0;
  const double v = std::normal_distribution<double>(3.0, 100.0)(rng);
  return t == DType::kF4 ? static_cast<double>(static_cast<float>(v)) : v;
}

// ---- the reference: NumPy's rules in long double over the cells themselves --

struct Expected {
  ld count, sum, mean, var, std, min, max;
  std::vector<ld> moments;  // orders 0..J about `center`
  ld com;
  bool index_nan;  // moment/moments/com/spread NaN
  bool polyfit_nan;
  ld sum_abs = 0;  // Σ|a| over the finite cells kept: error scale
  std::vector<ld> moment_scale;
};

Expected Reference(const std::vector<ld>& a, uint64_t p, uint64_t q, bool skipna, int ddof, int order, ld center) {
  Expected e{};
  std::vector<ld> kept;
  bool any_nan = false, any_inf = false;
  for (uint64_t i = p; i < q; ++i) {
    if (std::isnan(a[i])) {
      any_nan = true;
      if (skipna) continue;
    }
    if (std::isinf(a[i])) any_inf = true;
    kept.push_back(a[i]);
  }
  e.count = kept.size();
  ld sum = 0;
  for (ld v : kept) sum += v;  // IEEE: NaN propagates, inf - inf = NaN
  e.sum = sum;
  e.mean = kept.empty() ? kNaN : sum / kept.size();
  if (kept.size() <= static_cast<size_t>(ddof)) {
    e.var = kNaN;
  } else {
    ld ss = 0;
    for (ld v : kept) ss += (v - e.mean) * (v - e.mean);  // inf - inf = NaN
    e.var = ss / (kept.size() - ddof);
  }
  e.std = std::sqrt(e.var);
  e.min = kept.empty() ? kNaN : kept[0];
  e.max = e.min;
  for (ld v : kept) {
    if (std::isnan(v) || std::isnan(e.min)) {
      e.min = e.max = kNaN;
      continue;
    }
    e.min = std::min(e.min, v);
    e.max = std::max(e.max, v);
  }
  e.index_nan = (any_nan && !skipna) || any_inf;
  e.polyfit_nan = any_nan || any_inf;
  e.moments.assign(order + 1, 0);
  e.moment_scale.assign(order + 1, 0);
  ld m1 = 0;
  for (uint64_t i = p; i < q; ++i) {
    if (!std::isfinite(a[i])) continue;
    e.sum_abs += std::fabs(a[i]);
    m1 += static_cast<ld>(i) * a[i];
    ld x = 1, ax = 1;
    for (int j = 0; j <= order; ++j) {
      e.moments[j] += x * a[i];
      e.moment_scale[j] += ax * std::fabs(a[i]);
      x *= static_cast<ld>(i) - center;
      ax *= std::fabs(static_cast<ld>(i) - center) + std::fabs(static_cast<ld>(p) - center) + 1;
    }
  }
  e.com = m1 / e.moments[0];
  return e;
}

// got == want in kind (NaN, ±inf) and within `tolerance` when finite.
void ExpectValue(const std::string& what, ld got, ld want, ld tolerance) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << static_cast<double>(got) << ", want nan";
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what;
  } else {
    EXPECT_LE(std::fabs(got - want), tolerance)
        << what << ": got " << static_cast<double>(got) << ", want " << static_cast<double>(want);
  }
}

ld Answer(Stat stat, const StatParams& params, const RangeSummary& s, uint64_t p, DType t, size_t k = 0) {
  auto a = ComputeStat(stat, params, s, p, t);
  EXPECT_OK(a) << StatName(stat) << ": " << a.status().ToString();
  if (!a.ok() || a->values.size() <= k) return -12345;
  return a->values[k];
}

void CheckRange(BufferedArray& ba, const std::vector<ld>& a, DType t, uint64_t p, uint64_t q, std::mt19937_64& rng) {
  const int order = TreeOf(ba).order();
  for (int skipna = 0; skipna < 2; ++skipna) {
    for (int need_extremes = 0; need_extremes < 2; ++need_extremes) {  // both ways of reading partial leaves
      SCOPED_TRACE("range " + std::to_string(p) + ":" + std::to_string(q) + (skipna ? " skipna" : "") +
                   (need_extremes ? " (extremes)" : " (shorter side)"));
      auto s = ba.Summarize(p, q, need_extremes != 0);
      ASSERT_OK(s);
      StatParams params;
      params.skipna = skipna != 0;
      params.ddof = static_cast<int>(rng() % 2);
      const ld center = static_cast<ld>(p) + static_cast<ld>(rng() % (q - p + 3)) - 1;
      params.about = center;
      params.order = order;
      const Expected e = Reference(a, p, q, params.skipna, params.ddof, order, center);
      ExpectValue("count", Answer(Stat::kCount, params, *s, p, t), e.count, 0);
      ExpectValue("sum", Answer(Stat::kSum, params, *s, p, t), e.sum, 1e-12L * e.sum_abs + 1e-300L);
      if (q - p <= static_cast<uint64_t>(params.ddof)) continue;  // structural errors, tested elsewhere
      ExpectValue("mean", Answer(Stat::kMean, params, *s, p, t), e.mean, 1e-12L * e.sum_abs / (q - p) + 1e-300L);
      const ld var_tol = 1e-9L * (std::isfinite(e.var) ? e.var : 0) + 1e-12L;
      ExpectValue("var", Answer(Stat::kVar, params, *s, p, t), e.var, var_tol);
      ExpectValue("std", Answer(Stat::kStd, params, *s, p, t), e.std, std::sqrt(var_tol) + 1e-9L);
      if (need_extremes) {
        ExpectValue("min", Answer(Stat::kMin, params, *s, p, t), e.min, 0);
        ExpectValue("max", Answer(Stat::kMax, params, *s, p, t), e.max, 0);
      }
      for (int j = 0; j <= order; ++j)
        ExpectValue("moments[" + std::to_string(j) + "]", Answer(Stat::kMoments, params, *s, p, t, j),
                    e.index_nan ? kNaN : e.moments[j], 1e-9L * e.moment_scale[j] + 1e-300L);
      params.order = 1;
      ExpectValue("moment 1", Answer(Stat::kMoment, params, *s, p, t), e.index_nan ? kNaN : e.moments[1],
                  1e-9L * e.moment_scale[1] + 1e-300L);
      auto com = ComputeStat(Stat::kCom, params, *s, p, t);
      if (e.index_nan) {
        ASSERT_OK(com);
        EXPECT_TRUE(std::isnan(com->values[0]));
      } else if (com.ok() && std::fabs(e.moments[0]) > 1e-3L * e.sum_abs) {
        ExpectValue("com", com->values[0], e.com, 1e-6L * (q + 1));
      }
      if (order >= 2) {
        auto spread = ComputeStat(Stat::kSpread, params, *s, p, t);
        if (e.index_nan) {
          ASSERT_OK(spread);
          EXPECT_TRUE(std::isnan(spread->values[0]));
        }
      }
      params.degree = 1;
      auto fit = ComputeStat(Stat::kPolyfit, params, *s, p, t);
      if (q - p >= 2) {
        ASSERT_OK(fit);
        EXPECT_EQ(std::isnan(fit->values[0]), e.polyfit_nan);
        EXPECT_EQ(std::isnan(fit->values[1]), e.polyfit_nan);
      }
    }
  }
}

class NonFiniteTest : public ::testing::TestWithParam<DType> {};

TEST_P(NonFiniteTest, RandomRangesAndUpdatesFollowNumpy) {
  const DType t = GetParam();
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const uint64_t n = 500 + rng() % 1500;
  const std::string path = dir.File("a.npy");
  std::vector<ld> a(n);
  {
    IoOptions io;
    io.writable = true;
    io.kind = IoKind::kPread;
    const uint64_t shape[] = {n};
    auto f = ArrayFile::Create(path, t, shape, io);
    ASSERT_OK(f);
    std::vector<Value> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = Value::Float(RandomCell(rng, t));
    // Runs: a leaf's worth of NaN, of +inf, and a run mixing both infinities.
    for (uint64_t i = 64; i < 96 && i < n; ++i) values[i] = Value::Float(std::nan(""));
    for (uint64_t i = 200; i < 216 && i < n; ++i) values[i] = Value::Float(kInf);
    for (uint64_t i = 300; i < 340 && i < n; ++i) values[i] = Value::Float(i % 2 ? kInf : -kInf);
    ASSERT_OK((*f)->WriteValues(0, values));
    for (uint64_t i = 0; i < n; ++i) a[i] = values[i].f;
  }
  BufferedArrayOptions options;
  options.io.kind = IoKind::kPread;
  options.io.writable = true;
  options.tree.order = 2;
  options.tree.leaf_span = 16;
  options.tree.fanout = 4;
  options.tree.ram_budget = 1024;  // most levels in the disk tier
  auto opened = BufferedArray::Open(path, options);
  ASSERT_OK(opened);
  std::unique_ptr<BufferedArray> ba = std::move(opened).value();
  auto random_range = [&](uint64_t* p, uint64_t* q) {
    *p = rng() % (n + 1);
    *q = rng() % (n + 1);
    if (*p > *q) std::swap(*p, *q);
    if (*p == *q) *q = std::min(n, *q + 1 + rng() % 40), *p = std::min(*p, *q - 1);
  };
  for (int step = 0; step < 120; ++step) {
    uint64_t p, q;
    random_range(&p, &q);
    if (step == 0) p = 0, q = n;
    if (step == 1) p = 64, q = 96;    // NaN only
    if (step == 2) p = 200, q = 216;  // +inf only
    CheckRange(*ba, a, t, p, q, rng);
    if (::testing::Test::HasFailure()) return;
    // Updates that move cells between finite, NaN and ±inf, in both
    // directions, scattered and consecutive.
    std::vector<IndexedValue> ups;
    for (int u = 0; u < 8; ++u) ups.push_back({rng() % n, Value::Float(RandomCell(rng, t))});
    if (step % 4 == 0) {  // clear a whole non-finite run back to finite, or make one
      const uint64_t first = rng() % n;
      for (uint64_t i = first; i < std::min(n, first + 20); ++i)
        ups.push_back({i, Value::Float(step % 8 == 0 ? 1.5 : std::nan(""))});
    }
    ASSERT_OK(ba->Apply(ups));
    for (const IndexedValue& u : ups) a[u.index] = u.value.f;
  }
  // Reopened, the buffer is exact (Verify compares the counts too).
  ba.reset();
  options.io.writable = false;
  auto again = BufferedArray::Open(path, options);
  ASSERT_OK(again);
  auto report = (*again)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u) << (report->examples.empty() ? "" : report->examples.front());
  for (int step = 0; step < 20; ++step) {
    uint64_t p, q;
    random_range(&p, &q);
    CheckRange(**again, a, t, p, q, rng);
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, NonFiniteTest, ::testing::Values(DType::kF8, DType::kF4),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

// Updates after a rebuild to another layout (as many levels, more nodes) keep
// every node's check and counts right.
TEST(NonFiniteRebuildTest, UpdatesAfterARebuildToAnotherLayout) {
  ScratchDir dir;
  const std::string path = dir.File("r.npy");
  const uint64_t n = 5000;
  {
    IoOptions io;
    io.writable = true;
    io.kind = IoKind::kPread;
    const uint64_t shape[] = {n};
    ASSERT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
  }
  BufferedArrayOptions options;
  options.io.kind = IoKind::kPread;
  options.io.writable = true;
  options.tree.leaf_span = 64;
  options.tree.fanout = 8;
  auto ba = BufferedArray::Open(path, options);
  ASSERT_OK(ba);
  std::mt19937_64 rng(3);
  auto update = [&] {
    std::vector<IndexedValue> ups;
    for (int k = 0; k < 300; ++k) ups.push_back({rng() % n, Value::Float(RandomCell(rng, DType::kF8))});
    ASSERT_OK((*ba)->Apply(ups));
  };
  update();
  TreeOptions smaller = options.tree;
  smaller.leaf_span = 16;  // 313, 40, 5 nodes against 79, 10, 2: as many levels, more nodes
  ASSERT_OK((*ba)->Rebuild(smaller));
  update();
  auto report = (*ba)->Verify();
  ASSERT_OK(report);
  EXPECT_EQ(report->mismatches, 0u) << (report->examples.empty() ? "" : report->examples.front());
  EXPECT_EQ(report->nodes_checked, TreeOf(**ba).layout().total_nodes());
}

// A node's counts and finite moments after random transitions between every
// class, against a recount of its cells.
TEST(NonFiniteNodeTest, TransitionsKeepCountsExact) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(SeedTrace(seed));
  std::mt19937_64 rng(seed);
  const int order = 3;
  const NodeCodec codec(order);
  const size_t n = 40;
  std::vector<double> cells(n), scratch(n);
  for (double& c : cells) c = RandomCell(rng, DType::kF8);
  auto summary = [&] {
    return RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(cells.data()), n, scratch.data());
  };
  std::vector<double> node(codec.doubles());
  codec.Encode(summary(), /*slot=*/0, node.data());
  for (int u = 0; u < 3000; ++u) {
    const uint64_t at = rng() % n;
    const double old_value = cells[at], new_value = RandomCell(rng, DType::kF8);
    cells[at] = new_value;
    const auto outcome = codec.ApplyUpdate(node.data(), n, at, old_value, new_value, {});
    const RangeSummary want = summary();
    if (outcome.extremes_may_shrink) codec.SetExtremes(node.data(), want.extremes);
    const RangeSummary got = codec.Decode(node.data(), n);
    ASSERT_EQ(got.nonfinite, want.nonfinite) << "after update " << u;
    ASSERT_EQ(got.values.count(), want.values.count()) << "after update " << u;
    ASSERT_EQ(got.extremes.min, want.extremes.min) << "after update " << u;
    ASSERT_EQ(got.extremes.max, want.extremes.max) << "after update " << u;
    for (int j = 0; j <= order; ++j) {
      const ld scale = std::pow(static_cast<ld>(n), j) * 1e3L * n;
      ASSERT_NEAR(static_cast<double>(got.index.moment(j)), static_cast<double>(want.index.moment(j)),
                  static_cast<double>(1e-12L * scale))
          << "order " << j << " after update " << u;
    }
    if (want.values.count() > 0) {
      ASSERT_NEAR(static_cast<double>(got.values.mean()), static_cast<double>(want.values.mean()), 1e-9)
          << "after update " << u;
      const ld c = want.values.central_sum_of_squares();
      ASSERT_NEAR(static_cast<double>(got.values.central_sum_of_squares()), static_cast<double>(c),
                  static_cast<double>(1e-9L * c + 1e-6L))
          << "after update " << u;
    }
  }
}

// Integer dtypes have no NaN: their nodes count nothing, and the answers stay exact.
TEST(NonFiniteNodeTest, IntegersCountNothing) {
  std::vector<int32_t> cells = {5, -7, 2147483647, -2147483647 - 1, 0, 9};
  std::vector<double> scratch(cells.size());
  const RangeSummary s = RangeSummary::OfElements(2, DType::kI4, reinterpret_cast<const char*>(cells.data()),
                                                  cells.size(), scratch.data());
  EXPECT_EQ(s.nonfinite, NonFiniteCounts{});
  EXPECT_EQ(s.values.count(), cells.size());
  StatParams params;
  params.skipna = true;
  auto sum = ComputeStat(Stat::kSum, params, s, 0, DType::kI4);
  ASSERT_OK(sum);
  EXPECT_EQ(Int128ToString(sum->integer), "6");
  auto count = ComputeStat(Stat::kCount, params, s, 0, DType::kI4);
  ASSERT_OK(count);
  EXPECT_EQ(count->integer, 6);
}

// The CLI against NumPy itself: every value statistic, with and without
// --skipna, text and --json, on a small array NumPy wrote.
TEST(NonFiniteCliTest, QueryMatchesNumpy) {
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 cannot import numpy";
  ScratchDir dir;
  const std::string path = dir.File("x.npy");
  const std::string py =
      "import json, math, subprocess, sys\n"
      "import numpy as np\n"
      "a = np.array([1.5, np.nan, 2.0, np.inf, -3.0, 4.0, np.nan, -np.inf, 7.0, 0.25] + [float(i) for i in range(40)]"
      " + [np.inf, 1.0, np.nan], dtype='<f8')\n"
      "np.save(sys.argv[1], a)\n"
      "ranges = [(0, len(a)), (0, 3), (2, 5), (4, 7), (8, 50), (1, 2), (6, 8), (10, 30), (49, 52)]\n"
      "fns = {'sum': (np.sum, np.nansum), 'mean': (np.mean, np.nanmean), 'var': (np.var, np.nanvar),\n"
      "       'std': (np.std, np.nanstd), 'min': (np.min, np.nanmin), 'max': (np.max, np.nanmax)}\n"
      "import warnings\n"
      "warnings.simplefilter('ignore')\n"
      "def same(got, want):\n"
      "    if math.isnan(want): return math.isnan(got)\n"
      "    if math.isinf(want): return got == want\n"
      "    return abs(got - want) <= 1e-12 * max(1.0, abs(want))\n"
      "bad = 0\n"
      "for p, q in ranges:\n"
      "    s = a[p:q]\n"
      "    for skip in (0, 1):\n"
      "        args = [sys.argv[2], 'query', sys.argv[1], '--range', f'{p}:{q}']\n"
      "        for name in fns: args += ['--stat', name]\n"
      "        args += ['--stat', 'count'] + (['--skipna'] if skip else [])\n"
      "        text = subprocess.run(args, capture_output=True, text=True)\n"
      "        js = subprocess.run(args + ['--json'], capture_output=True, text=True)\n"
      "        if text.returncode or js.returncode:\n"
      "            print('failed', p, q, skip, text.stderr, js.stderr); bad += 1; continue\n"
      "        got_text = {l.split()[0]: float(l.split()[1]) for l in text.stdout.splitlines()}\n"
      "        got_json = json.loads(js.stdout)['stats']\n"
      "        for name, (plain, nan_fn) in fns.items():\n"
      "            want = float((nan_fn if skip else plain)(s))\n"
      "            t, j = got_text[name], got_json[name]\n"
      "            jv = float(j)\n"
      "            ok = same(t, want) and same(jv, want)\n"
      "            if not math.isfinite(want) and not isinstance(j, str): ok = False\n"
      "            want_text = 'nan' if math.isnan(want) else 'inf' if want == math.inf else "
      "'-inf' if want == -math.inf else None\n"
      "            line = [l for l in text.stdout.splitlines() if l.split()[0] == name][0]\n"
      "            if want_text is not None and line != name + ' ' + want_text: ok = False\n"
      "            want_json = {'nan': 'NaN', 'inf': 'Infinity', '-inf': '-Infinity'}.get(want_text)\n"
      "            if want_json is not None and j != want_json: ok = False\n"
      "            if not ok: print('mismatch', name, p, q, 'skipna' if skip else '', 'text', line, 'json', j,"
      " 'numpy', want); bad += 1\n"
      "        want_count = int(np.count_nonzero(~np.isnan(s))) if skip else len(s)\n"
      "        if got_text['count'] != want_count or got_json['count'] != want_count:\n"
      "            print('count', p, q, skip, got_text['count'], got_json['count'], want_count); bad += 1\n"
      "print('bad', bad)\n";
  const std::string script = dir.File("check.py");
  testing::WriteFileBytes(script, py);
  auto r = testing::RunCommand({MOMENTA_PYTHON, script, path, MOMENTA_CLI_PATH});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("bad 0\n"), std::string::npos) << r.out << r.err;
  // Index statistics are NaN with a NaN or an infinity in the range.
  auto idx = testing::RunCli(
      {"query", path, "--range", "0:5", "--stat", "moment", "--stat", "com", "--stat", "polyfit", "--json"});
  ASSERT_EQ(idx.exit_code, 0) << idx.err;
  EXPECT_NE(idx.out.find("\"stats\":{\"moment\":\"NaN\",\"com\":\"NaN\",\"polyfit\":[\"NaN\",\"NaN\"]}"),
            std::string::npos)
      << idx.out;
  auto skip = testing::RunCli(
      {"query", path, "--range", "0:3", "--stat", "moment", "--order", "0", "--stat", "polyfit", "--skipna"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(skip.out, "moment 3.5\npolyfit nan nan\n");
}

}  // namespace
}  // namespace momenta
