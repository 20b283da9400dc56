// sumsq and rms (Σ a² and sqrt(mean(a²))) from the moment buffer, both kinds
// (the tree, and Ola, whose tree answers them), every dtype, with NaN and
// ±inf in float arrays of the tree kind (Ola holds finite values only) and updates in between: random ranges against a
// long-double scan with NumPy's rules (np.sum(x**2), np.sqrt(np.mean(x**2)),
// x**2 in long double; skipna as np.nansum / np.nanmean), within 1e-9 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "storage/array_file.h"
#include "buffers/ola_statistics.h"
#include "buffers/statistics.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using ld = long double;
using testing::ScratchDir;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A random value of `t`: floats mostly normal with NaN and ±inf sprinkled,
// integers over the dtype's whole range (or small, a quarter of the time).
// The Ola kind holds finite values only: no NaN or infinity for it.
Value RandomValue(DType t, std::mt19937_64& rng, bool nonfinite) {
  if (!DTypeIsInteger(t)) {
    const uint64_t r = nonfinite ? rng() % 100 : 99;
    if (r < 3) return Value::Float(std::nan(""));
    if (r < 5) return Value::Float(r < 4 ? kInf : -kInf);
    const double v = std::normal_distribution<double>(5.0, 1e3)(rng);
    return Value::Float(t == DType::kF4 ? static_cast<double>(static_cast<float>(v)) : v);
  }
  const int bits = static_cast<int>(DTypeSize(t)) * 8;
  const bool small = rng() % 4 == 0;
  if (DTypeIsSigned(t)) {
    const int64_t v = static_cast<int64_t>(rng()) >> (64 - bits);
    return Value::Int(small ? v % 100 : v);
  }
  const uint64_t v = bits == 64 ? rng() : rng() >> (64 - bits);
  return Value::UInt(small ? v % 100 : v);
}

ld AsLongDouble(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kInt: return static_cast<ld>(v.i);
    case Value::Kind::kUInt: return static_cast<ld>(v.u);
    default: return static_cast<ld>(v.f);
  }
}

BufferedArrayOptions Options(bool ola) {
  BufferedArrayOptions o;
  o.io.writable = true;
  o.io.kind = IoKind::kPread;
  o.tree.order = ola ? 0 : 2;
  o.tree.leaf_span = 64;
  o.tree.fanout = 4;
  o.tree.ram_budget = 1024;
  if (ola) {
    o.tree.ola_nodes = 4;
    o.tree.ola_bin = 8;
  }
  return o;
}

// Checks sumsq and rms over [p, q) with and without skipna.
void CheckRange(BufferedArray& ba, const std::vector<ld>& a, DType t, uint64_t p, uint64_t q) {
  SCOPED_TRACE("range " + std::to_string(p) + ":" + std::to_string(q));
  auto summary = ba.Summarize(p, q, /*need_extremes=*/false);
  ASSERT_OK(summary);
  for (bool skipna : {false, true}) {
    ld sumsq = 0;
    uint64_t kept = 0;
    for (uint64_t i = p; i < q; ++i) {
      if (skipna && std::isnan(a[i])) continue;
      sumsq += a[i] * a[i];
      ++kept;
    }
    StatParams params;
    params.skipna = skipna;
    auto got = ComputeStat(Stat::kSumsq, params, *summary, p, t);
    ASSERT_OK(got);
    auto rms = ComputeStat(Stat::kRms, params, *summary, p, t);
    if (q == p) {
      EXPECT_EQ(got->values[0], 0.0L);
      EXPECT_FALSE(rms.ok());
      continue;
    }
    ASSERT_OK(rms);
    const ld want_rms = kept == 0 ? std::numeric_limits<ld>::quiet_NaN() : std::sqrt(sumsq / kept);
    for (auto [g, w, name] : {std::tuple{got->values[0], sumsq, "sumsq"}, std::tuple{rms->values[0], want_rms, "rms"}}) {
      if (std::isnan(w) || std::isinf(w)) {
        EXPECT_EQ(std::isnan(g), std::isnan(w)) << name << " skipna=" << skipna;
        if (std::isinf(w)) {
          EXPECT_EQ(g, w) << name << " skipna=" << skipna;
        }
      } else {
        EXPECT_LE(std::fabs(g - w), kReferenceRelativeError * w)
            << name << " skipna=" << skipna << ": got " << static_cast<double>(g) << " want " << static_cast<double>(w);
      }
    }
  }
}

void RandomRangesMatchAScan(DType t, bool ola, uint64_t seed) {
  SCOPED_TRACE(std::string(DTypeName(t)) + (ola ? " ola" : " hbb") + " seed " + std::to_string(seed) +
               " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)");
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  const uint64_t n = 1 + rng() % 3000;
  std::vector<ld> a(n, 0);
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {n};
    auto f = ArrayFile::Create(path, t, shape, io);
    ASSERT_OK(f);
    std::vector<Value> values;
    for (uint64_t i = 0; i < n; ++i) values.push_back(rng() % 5 ? RandomValue(t, rng, !ola) : DTypeIsInteger(t) ? Value::UInt(0) : Value::Float(0));
    for (uint64_t i = 0; i < n; ++i) a[i] = AsLongDouble(values[i]);
    ASSERT_OK((*f)->WriteValues(0, values));
  }
  auto opened = BufferedArray::Open(path, Options(ola));
  ASSERT_OK(opened);
  BufferedArray& ba = **opened;
  ASSERT_EQ(OlaOf(ba) != nullptr, ola);
  auto ranges = [&] {
    for (int k = 0; k < 150; ++k) {
      uint64_t p = rng() % (n + 1), q = rng() % (n + 1);
      if (p > q) std::swap(p, q);
      CheckRange(ba, a, t, p, q);
    }
    CheckRange(ba, a, t, 0, n);
  };
  ranges();
  // Updates (a NaN or an infinity moves in and out of float cells), then again.
  std::vector<IndexedValue> updates;
  for (int k = 0; k < 200; ++k) {
    const uint64_t i = rng() % n;
    const Value v = RandomValue(t, rng, !ola);
    updates.push_back({i, v});
    a[i] = AsLongDouble(v);
  }
  ASSERT_OK(ba.Apply(updates));
  ASSERT_OK(ba.Commit());
  ranges();
}

TEST(SquaresTest, EveryDtypeBothKindsMatchAScan) {
  const uint64_t seed = testing::TestSeed();
  for (DType t : {DType::kF8, DType::kF4, DType::kI1, DType::kI2, DType::kI4, DType::kI8, DType::kU1, DType::kU2,
                  DType::kU4, DType::kU8})
    for (bool ola : {false, true}) RandomRangesMatchAScan(t, ola, seed);
}

TEST(SquaresTest, NamesAndTheOlaIndexMomentsRefusal) {
  EXPECT_EQ(ParseStat("sumsq", "--stat").value(), Stat::kSumsq);
  EXPECT_EQ(ParseStat("rms", "--stat").value(), Stat::kRms);
  EXPECT_EQ(StatName(Stat::kRms), "rms");
  EXPECT_FALSE(ServedByIndexMoments(Stat::kSumsq));
  // The Ola buffer's index moments cannot give Σa²; the refusal says why.
  IndexMoments index = IndexMoments::Of(1, std::vector<double>{1, 2, 3});
  auto r = OlaStat(Stat::kRms, {}, index, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("values' moments"), std::string::npos) << r.status().ToString();
  // An Ola-kind array still answers both: its tree keeps the value moments (above).
  EXPECT_FALSE(OlaAlone({Stat::kSumsq}, DType::kF8));
}

}  // namespace
}  // namespace momenta
