// sumsq and rms (Σ a² and sqrt(mean(a²))) from the moment buffer, both kinds
// (the tree, and Ola, whose tree answers them), every dtype, with NaN and
// ±inf in float arrays of the tree kind (Ola holds finite values only) and updates in between: random ranges against a
// long-double scan with NumPy's rules (np.sum(x**2), np.sqrt(np.mean(x**2)),
// x**2 in long double; skipna as np.nansum / np.nanmean), within 1e-9 relative.
// Integer dtypes: sumsq exact (an integer answer wherever Σa² fits Int128,
// its correctly rounded long double past it), against a multi-limb scan, for
// values at the dtype's extremes, before and after updates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/ola/ola_statistics.h"
#include "storage/array/array_file.h"
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
    case Value::Kind::kInt:
      return static_cast<ld>(v.i);
    case Value::Kind::kUInt:
      return static_cast<ld>(v.u);
    default:
      return static_cast<ld>(v.f);
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
    for (auto [g, w, name] :
         {std::tuple{got->values[0], sumsq, "sumsq"}, std::tuple{rms->values[0], want_rms, "rms"}}) {
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
    for (uint64_t i = 0; i < n; ++i)
      values.push_back(rng() % 5 ? RandomValue(t, rng, !ola) : DTypeIsInteger(t) ? Value::UInt(0) : Value::Float(0));
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

// Σ a² of integers as 32-bit limbs, little-endian: a reference that shares
// no code with Int192.
struct LimbSum {
  std::vector<uint64_t> limbs = std::vector<uint64_t>(8, 0);  // each < 2^32
  void AddSquare(const Value& v) {
    const UInt128 m = v.kind == Value::Kind::kUInt ? v.u : v.i < 0 ? -static_cast<UInt128>(v.i) : v.i;
    const uint64_t a[2] = {static_cast<uint64_t>(m) & 0xffffffffu, static_cast<uint64_t>(m >> 32)};
    // m < 2^64: (a1·2^32 + a0)² = a1²·2^64 + 2·a0·a1·2^32 + a0², limb by limb.
    std::vector<uint64_t> square(6, 0);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        uint64_t carry = a[i] * a[j];  // < 2^64
        for (int k = i + j; carry != 0; ++k) {
          const uint64_t t = square[k] + (carry & 0xffffffffu);
          square[k] = t & 0xffffffffu;
          carry = (carry >> 32) + (t >> 32);
        }
      }
    uint64_t carry = 0;
    for (size_t k = 0; k < limbs.size(); ++k) {
      const uint64_t t = limbs[k] + (k < square.size() ? square[k] : 0) + carry;
      limbs[k] = t & 0xffffffffu;
      carry = t >> 32;
    }
  }
  // The value when below 2^127.
  std::optional<Int128> Small() const {
    for (size_t k = 4; k < limbs.size(); ++k)
      if (limbs[k] != 0) return std::nullopt;
    if (limbs[3] >> 31) return std::nullopt;
    UInt128 v = 0;
    for (int k = 3; k >= 0; --k) v = (v << 32) | limbs[k];
    return static_cast<Int128>(v);
  }
  ld Approx() const {
    ld v = 0;
    for (size_t k = limbs.size(); k-- > 0;) v = v * 4294967296.0L + static_cast<ld>(limbs[k]);
    return v;
  }
};

// A value of integer dtype `t` at or near its extremes (or small, or 0).
Value ExtremeValue(DType t, std::mt19937_64& rng) {
  const int bits = static_cast<int>(DTypeSize(t)) * 8;
  const uint64_t near = rng() % 3;
  if (DTypeIsSigned(t)) {
    const int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    const int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    switch (rng() % 4) {
      case 0:
        return Value::Int(lo + static_cast<int64_t>(near));
      case 1:
        return Value::Int(hi - static_cast<int64_t>(near));
      case 2:
        return Value::Int(static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * std::min<int64_t>(hi, 1000) + 1)) -
                          std::min<int64_t>(hi, 1000));
      default:
        return Value::Int(static_cast<int64_t>(rng()) >> (64 - bits));
    }
  }
  const uint64_t hi = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  switch (rng() % 3) {
    case 0:
      return Value::UInt(hi - near);
    case 1:
      return Value::UInt(rng() % (std::min<uint64_t>(hi, 999) + 1));
    default:
      return Value::UInt(bits == 64 ? rng() : rng() >> (64 - bits));
  }
}

// sumsq over [p, q) equals the limb scan exactly: an integer answer while
// it fits Int128, else its long double; rms = sqrt(Σa² / n) of it.
void CheckExactRange(BufferedArray& ba, const std::vector<Value>& a, DType t, uint64_t p, uint64_t q) {
  SCOPED_TRACE("range " + std::to_string(p) + ":" + std::to_string(q));
  auto summary = ba.Summarize(p, q, /*need_extremes=*/false);
  ASSERT_OK(summary);
  LimbSum want;
  for (uint64_t i = p; i < q; ++i) want.AddSquare(a[i]);
  auto got = ComputeStat(Stat::kSumsq, {}, *summary, p, t);
  ASSERT_OK(got);
  if (const auto small = want.Small()) {
    ASSERT_TRUE(got->is_integer);
    EXPECT_EQ(Int128ToString(got->integer), Int128ToString(*small));
  } else {
    EXPECT_FALSE(got->is_integer);
    EXPECT_LE(std::fabs(got->values[0] - want.Approx()), 0x1p-62L * want.Approx());
  }
  if (q == p) return;
  auto rms = ComputeStat(Stat::kRms, {}, *summary, p, t);
  ASSERT_OK(rms);
  const ld want_rms = std::sqrt(want.Approx() / static_cast<ld>(q - p));
  EXPECT_LE(std::fabs(rms->values[0] - want_rms), 0x1p-61L * want_rms);
}

void ExactRangesMatchALimbScan(DType t, uint64_t seed) {
  SCOPED_TRACE(std::string(DTypeName(t)) + " seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) +
               " reproduces)");
  std::mt19937_64 rng(seed);
  ScratchDir dir;
  const std::string path = dir.File("a.npy");
  const uint64_t n = 1 + rng() % 2000;
  std::vector<Value> a;
  for (uint64_t i = 0; i < n; ++i) a.push_back(ExtremeValue(t, rng));
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {n};
    auto f = ArrayFile::Create(path, t, shape, io);
    ASSERT_OK(f);
    ASSERT_OK((*f)->WriteValues(0, a));
  }
  auto opened = BufferedArray::Open(path, Options(/*ola=*/false));
  ASSERT_OK(opened);
  BufferedArray& ba = **opened;
  auto ranges = [&] {
    for (int k = 0; k < 100; ++k) {
      uint64_t p = rng() % (n + 1), q = rng() % (n + 1);
      if (p > q) std::swap(p, q);
      CheckExactRange(ba, a, t, p, q);
    }
    CheckExactRange(ba, a, t, 0, n);
  };
  ranges();
  // Updates one at a time (NodeCodec::ApplyUpdate) and in a batch (the
  // gathered NodeDelta path), each moving cells between extremes.
  for (int round = 0; round < 2; ++round) {
    std::vector<IndexedValue> updates;
    for (int k = 0; k < (round == 0 ? 1 : 300); ++k) {
      const uint64_t i = rng() % n;
      a[i] = ExtremeValue(t, rng);
      updates.push_back({i, a[i]});
    }
    ASSERT_OK(ba.Apply(updates));
    ASSERT_OK(ba.Commit());
    ranges();
  }
}

TEST(SquaresTest, IntegerSumsOfSquaresAreExactAtTheExtremes) {
  const uint64_t seed = testing::TestSeed();
  for (DType t : {DType::kI1, DType::kI2, DType::kI4, DType::kI8, DType::kU1, DType::kU2, DType::kU4, DType::kU8})
    ExactRangesMatchALimbScan(t, seed);
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
  const Stat sumsq[] = {Stat::kSumsq};
  EXPECT_FALSE(OlaAlone(sumsq, DType::kF8));
}

}  // namespace
}  // namespace momenta
