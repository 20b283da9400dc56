#include "buffers/algebra/moments.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace momenta {

namespace {

// ---- accumulation kernels --------------------------------------------------
//
// The hot loop of a partial-bin read and of a build. Cells are summed in blocks
// of kBlockCells in double, two SIMD vectors of two lanes each (four running
// sums per order, so the additions pipeline), with block-relative positions
// x < 256 that are exact in double; each block's tuple is then shifted to the
// run's start and added in long double. GCC/Clang vector extensions lower to
// SSE2 on x86-64 and to NEON on ARM; no -ffast-math is needed.

using Vec2 = double __attribute__((vector_size(16)));

constexpr size_t kBlockCells = 256;

inline Vec2 LoadVec2(const double* p) {
  Vec2 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

using Bits2 = uint64_t __attribute__((vector_size(16)));

// |v|: clear the sign bits (a vector cast reinterprets the bits).
inline Vec2 AbsVec2(Vec2 v) {
  constexpr uint64_t kMagnitudeBits = ~(uint64_t{1} << 63);
  const Bits2 mask = {kMagnitudeBits, kMagnitudeBits};
  return (Vec2)((Bits2)v & mask);
}

// out[j] = Σ_{x<n} x^j a_x (|a_x| when kAbs) for j = 0..J, in double.
// REQUIRES: n <= kBlockCells
template <int J, bool kAbs>
void BlockMoments(const double* a, size_t n, double* out) {
  Vec2 acc0[J + 1] = {};
  Vec2 acc1[J + 1] = {};
  Vec2 x0 = {0, 1};
  Vec2 x1 = {2, 3};
  const Vec2 step = {4, 4};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Vec2 p0 = LoadVec2(a + i);
    Vec2 p1 = LoadVec2(a + i + 2);
    if constexpr (kAbs) {
      p0 = AbsVec2(p0);
      p1 = AbsVec2(p1);
    }
    acc0[0] += p0;
    acc1[0] += p1;
    for (int j = 1; j <= J; ++j) {
      p0 *= x0;
      p1 *= x1;
      acc0[j] += p0;
      acc1[j] += p1;
    }
    x0 += step;
    x1 += step;
  }
  for (int j = 0; j <= J; ++j) {
    const Vec2 s = acc0[j] + acc1[j];
    out[j] = s[0] + s[1];
  }
  for (double x = static_cast<double>(i); i < n; ++i, x += 1) {
    double p = kAbs ? std::fabs(a[i]) : a[i];
    out[0] += p;
    for (int j = 1; j <= J; ++j) {
      p *= x;
      out[j] += p;
    }
  }
}

// The same sums with one AVX2 vector of four lanes where BlockMoments uses
// two SSE2 vectors of two: lane l holds the cells i ≡ l (mod 4) in both, every
// lane sees the same operations in the same order (no FMA: "avx2" alone does
// not allow contracting a·b + c), and the four lanes are reduced as
// (l0 + l2) + (l1 + l3) as there, so the results are bit for bit those of
// BlockMoments — a tree built on one CPU is recomputed exactly on another —
// at half the vector instructions. Chosen at run time (WideKernels).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOMENTA_WIDE_KERNELS 1
using Vec4 = double __attribute__((vector_size(32)));
using Bits4 = uint64_t __attribute__((vector_size(32)));

template <int J, bool kAbs>
__attribute__((target("avx2"))) void BlockMomentsWide(const double* a, size_t n, double* out) {
  Vec4 acc[J + 1] = {};
  Vec4 x = {0, 1, 2, 3};
  const Vec4 step = {4, 4, 4, 4};
  constexpr uint64_t kMagnitudeBits = ~(uint64_t{1} << 63);
  const Bits4 mask = {kMagnitudeBits, kMagnitudeBits, kMagnitudeBits, kMagnitudeBits};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Vec4 p;
    std::memcpy(&p, a + i, sizeof p);
    if constexpr (kAbs) p = (Vec4)((Bits4)p & mask);
    acc[0] += p;
    for (int j = 1; j <= J; ++j) {
      p *= x;
      acc[j] += p;
    }
    x += step;
  }
  for (int j = 0; j <= J; ++j) out[j] = (acc[j][0] + acc[j][2]) + (acc[j][1] + acc[j][3]);
  for (double xs = static_cast<double>(i); i < n; ++i, xs += 1) {
    double p = kAbs ? std::fabs(a[i]) : a[i];
    out[0] += p;
    for (int j = 1; j <= J; ++j) {
      p *= xs;
      out[j] += p;
    }
  }
}

// BlockDeviations (below) with four lanes, bit for bit as BlockMomentsWide is.
__attribute__((target("avx2"))) void BlockDeviationsWide(const double* a, size_t n, double k, double* s1, double* s2) {
  const Vec4 kv = {k, k, k, k};
  Vec4 sum = {}, sq = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Vec4 e;
    std::memcpy(&e, a + i, sizeof e);
    e -= kv;
    sum += e;
    sq += e * e;
  }
  *s1 = (sum[0] + sum[2]) + (sum[1] + sum[3]);
  *s2 = (sq[0] + sq[2]) + (sq[1] + sq[3]);
  for (; i < n; ++i) {
    const double e = a[i] - k;
    *s1 += e;
    *s2 += e * e;
  }
}
#endif

// Whether the four-lane kernels run (the CPU has AVX2, and no test turned
// them off: SetWideKernelsForTesting).
bool CpuHasAvx2() {
#ifdef MOMENTA_WIDE_KERNELS
  __builtin_cpu_init();  // this may run before the runtime's own initializer
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}
std::atomic<bool> wide_kernels{CpuHasAvx2()};

// m[t] += Σ_u C(t,u) δ^(t−u) block[u]: a block tuple about its own start added
// to a tuple about a point δ cells earlier.
template <int J>
void AddShiftedBlock(const double* block, long double delta, long double* m) {
  long double delta_power[J + 1];
  delta_power[0] = 1;
  for (int j = 1; j <= J; ++j) delta_power[j] = delta_power[j - 1] * delta;
  for (int t = 0; t <= J; ++t) {
    long double sum = 0;
    for (int u = 0; u <= t; ++u) sum += kBinomial[t][u] * delta_power[t - u] * block[u];
    m[t] += sum;
  }
}

// m[j] += Σ_{x<n} (first_offset + x)^j a_x (|a_x| when kAbs), j = 0..J.
template <int J, bool kAbs>
void AccumulateRun(const double* a, size_t n, uint64_t first_offset, long double* m) {
  [[maybe_unused]] const bool wide = wide_kernels.load(std::memory_order_relaxed);
  for (size_t start = 0; start < n; start += kBlockCells) {
    double block[J + 1];
#ifdef MOMENTA_WIDE_KERNELS
    if (wide)
      BlockMomentsWide<J, kAbs>(a + start, std::min(kBlockCells, n - start), block);
    else
#endif
      BlockMoments<J, kAbs>(a + start, std::min(kBlockCells, n - start), block);
    AddShiftedBlock<J>(block, static_cast<long double>(first_offset + start), m);
  }
}

using RunKernel = void (*)(const double*, size_t, uint64_t, long double*);

template <bool kAbs, size_t... J>
constexpr std::array<RunKernel, sizeof...(J)> MakeRunKernels(std::index_sequence<J...>) {
  return {&AccumulateRun<static_cast<int>(J), kAbs>...};
}
constexpr auto kRunKernels = MakeRunKernels<false>(std::make_index_sequence<kMaxMomentTerms>{});
constexpr auto kMagnitudeKernels = MakeRunKernels<true>(std::make_index_sequence<kMaxMomentTerms>{});

// *s1 = Σ (a − k), *s2 = Σ (a − k)² over n <= kBlockCells cells, in double.
void BlockDeviations(const double* a, size_t n, double k, double* s1, double* s2) {
  const Vec2 kv = {k, k};
  Vec2 sum0 = {}, sum1 = {}, sq0 = {}, sq1 = {};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Vec2 e0 = LoadVec2(a + i) - kv;
    const Vec2 e1 = LoadVec2(a + i + 2) - kv;
    sum0 += e0;
    sum1 += e1;
    sq0 += e0 * e0;
    sq1 += e1 * e1;
  }
  const Vec2 sum = sum0 + sum1;
  const Vec2 sq = sq0 + sq1;
  *s1 = sum[0] + sum[1];
  *s2 = sq[0] + sq[1];
  for (; i < n; ++i) {
    const double e = a[i] - k;
    *s1 += e;
    *s2 += e * e;
  }
}

// ---- binomial shift ---------------------------------------------------------

// Given moments m about a point s, the moments about s − delta:
// out[t] = Σ_x (x + delta)^t a_x = Σ_u C(t,u) delta^(t−u) m[u], t = 0..order.
MomentTerms Shifted(const MomentTerms& m, int order, long double delta) {
  MomentTerms delta_power{};
  delta_power[0] = 1;
  for (int j = 1; j <= order; ++j) delta_power[j] = delta_power[j - 1] * delta;
  MomentTerms out{};
  for (int t = 0; t <= order; ++t) {
    long double sum = 0;
    for (int u = 0; u <= t; ++u) sum += kBinomial[t][u] * delta_power[t - u] * m[u];
    out[t] = sum;
  }
  return out;
}

Status Empty(std::string_view stat) { return Status::InvalidArgument(stat, "the range is empty"); }

Status OrderTooHigh(std::string_view stat, std::string_view what, int asked, int stored) {
  return Status::InvalidArgument(
      stat, std::string(what) + " " + std::to_string(asked) + " exceeds the stored order " + std::to_string(stored));
}

Status NeedsOrder(std::string_view stat, int needed, int stored) {
  return Status::InvalidArgument(stat, "needs index moments of order " + std::to_string(needed) +
                                           ", the stored order is " + std::to_string(stored));
}

}  // namespace

MomentTerms ShiftedTerms(const MomentTerms& m, int order, long double delta) { return Shifted(m, order, delta); }

// ---- IndexMoments -------------------------------------------------------------

IndexMoments::IndexMoments(int order) : order_(order) { assert(0 <= order && order <= kMaxMomentOrder); }

IndexMoments IndexMoments::Of(int order, std::span<const double> values) {
  IndexMoments run(order);
  run.AppendImpl(values, /*magnitudes=*/false);
  return run;
}

IndexMoments IndexMoments::OfMagnitudes(int order, std::span<const double> values) {
  IndexMoments run(order);
  run.AppendImpl(values, /*magnitudes=*/true);
  return run;
}

void IndexMoments::Append(std::span<const double> values) { AppendImpl(values, false); }

void IndexMoments::AppendImpl(std::span<const double> values, bool magnitudes) {
  const RunKernel kernel = magnitudes ? kMagnitudeKernels[order_] : kRunKernels[order_];
  kernel(values.data(), values.size(), count_, m_.data());
  count_ += values.size();
}

IndexMoments IndexMoments::FromTerms(int order, uint64_t count, const MomentTerms& m) {
  IndexMoments run(order);
  run.count_ = count;
  for (int j = 0; j <= order; ++j) run.m_[j] = m[j];
  return run;
}

long double IndexMoments::moment(int j) const {
  assert(0 <= j && j <= order_);
  return m_[j];
}

IndexMoments IndexMoments::Truncated(int order) const {
  assert(0 <= order && order <= order_);
  IndexMoments run(order);
  run.count_ = count_;
  for (int j = 0; j <= order; ++j) run.m_[j] = m_[j];
  return run;
}

IndexMoments Merge(const IndexMoments& left, const IndexMoments& right) {
  assert(left.order_ == right.order_);
  IndexMoments total(left.order_);
  total.count_ = left.count_ + right.count_;
  const MomentTerms shifted = Shifted(right.m_, right.order_, static_cast<long double>(left.count_));
  for (int t = 0; t <= left.order_; ++t) total.m_[t] = left.m_[t] + shifted[t];
  return total;
}

// R_t = Σ_{u=0}^{t} C(t,u) (−δ)^(t−u) (T_u − L_u), δ = left.count()
// (buffers/REFERENCE.md §1.2).
IndexMoments UnmergeRight(const IndexMoments& total, const IndexMoments& left) {
  assert(total.order_ == left.order_ && left.count_ <= total.count_);
  MomentTerms difference{};
  for (int t = 0; t <= total.order_; ++t) difference[t] = total.m_[t] - left.m_[t];
  IndexMoments right(total.order_);
  right.count_ = total.count_ - left.count_;
  right.m_ = Shifted(difference, total.order_, -static_cast<long double>(left.count_));
  return right;
}

// L_t = T_t − Σ_{u=0}^{t} C(t,u) δ^(t−u) R_u, δ = total.count() − right.count()
// (buffers/REFERENCE.md §1.2).
IndexMoments UnmergeLeft(const IndexMoments& total, const IndexMoments& right) {
  assert(total.order_ == right.order_ && right.count_ <= total.count_);
  IndexMoments left(total.order_);
  left.count_ = total.count_ - right.count_;
  const MomentTerms shifted = Shifted(right.m_, right.order_, static_cast<long double>(left.count_));
  for (int t = 0; t <= total.order_; ++t) left.m_[t] = total.m_[t] - shifted[t];
  return left;
}

MomentTerms ShiftTo(const IndexMoments& run, long double center) { return Shifted(run.terms(), run.order(), -center); }

MomentTerms MagnitudesAbout(const IndexMoments& magnitudes, long double center) {
  return Shifted(magnitudes.terms(), magnitudes.order(), std::fabs(center));
}

MomentTerms ReferenceErrorBound(const IndexMoments& magnitudes, long double center) {
  MomentTerms bound = MagnitudesAbout(magnitudes, center);
  for (long double& b : bound) b *= kReferenceRelativeError;
  return bound;
}

// ---- ValueMoments -----------------------------------------------------------

ValueMoments ValueMoments::Of(std::span<const double> values) {
  if (values.empty()) return ValueMoments();
  // Shift by the first value (near the data, one pass), then re-center.
  const double k = values[0];
  [[maybe_unused]] const bool wide = wide_kernels.load(std::memory_order_relaxed);
  long double s1 = 0, s2 = 0;
  for (size_t start = 0; start < values.size(); start += kBlockCells) {
    double block_s1, block_s2;
#ifdef MOMENTA_WIDE_KERNELS
    if (wide)
      BlockDeviationsWide(values.data() + start, std::min(kBlockCells, values.size() - start), k, &block_s1, &block_s2);
    else
#endif
      BlockDeviations(values.data() + start, std::min(kBlockCells, values.size() - start), k, &block_s1, &block_s2);
    s1 += block_s1;
    s2 += block_s2;
  }
  return ValueMoments(values.size(), k, s1, s2).Recentered();
}

void ValueMoments::Store(std::span<double> stored) const {
  assert(stored.size() == 3);
  stored[0] = shift_;
  stored[1] = static_cast<double>(s1_);
  stored[2] = static_cast<double>(s2_);
}

ValueMoments ValueMoments::Load(uint64_t count, std::span<const double> stored) {
  assert(stored.size() == 3);
  if (count == 0) return ValueMoments();
  return ValueMoments(count, stored[0], stored[1], stored[2]);
}

long double ValueMoments::mean() const {
  assert(count_ > 0);
  return shift_ + s1_ / static_cast<long double>(count_);
}

long double ValueMoments::central_sum_of_squares() const {
  if (count_ == 0) return 0;
  const long double central = s2_ - s1_ * (s1_ / static_cast<long double>(count_));
  return central > 0 ? central : 0;
}

void ValueMoments::Append(std::span<const double> values) { *this = Merge(*this, Of(values)); }

void ValueMoments::ApplyUpdate(double old_value, double new_value) {
  assert(count_ > 0);
  // a − K is exact in long double (11 more bits than a double) when a and K
  // are within a factor ~2^10 of each other, so S1 and S2 change by (almost)
  // exactly the right amounts.
  const long double old_dev = static_cast<long double>(old_value) - shift_;
  const long double new_dev = static_cast<long double>(new_value) - shift_;
  s1_ += new_dev - old_dev;
  s2_ += (new_dev - old_dev) * (new_dev + old_dev);
  // Re-center once (mean − K)² exceeds the variance: 2·S1² > n·S2.
  if (2 * s1_ * s1_ > static_cast<long double>(count_) * s2_) *this = Recentered();
}

void ValueMoments::AddDeviations(long double ds1, long double ds2) {
  assert(count_ > 0);
  s1_ += ds1;
  s2_ += ds2;
  if (s2_ < 0) s2_ = 0;
  if (2 * s1_ * s1_ > static_cast<long double>(count_) * s2_) *this = Recentered();
}

void ValueMoments::Insert(double value) {
  if (count_ == 0) {
    *this = ValueMoments(1, value, 0, 0);
    return;
  }
  const long double dev = static_cast<long double>(value) - shift_;
  ++count_;
  s1_ += dev;
  s2_ += dev * dev;
  if (2 * s1_ * s1_ > static_cast<long double>(count_) * s2_) *this = Recentered();
}

void ValueMoments::Erase(double value) {
  assert(count_ > 0);
  if (count_ == 1) {
    *this = ValueMoments();
    return;
  }
  const long double dev = static_cast<long double>(value) - shift_;
  --count_;
  s1_ -= dev;
  s2_ -= dev * dev;
  if (s2_ < 0) s2_ = 0;
  if (2 * s1_ * s1_ > static_cast<long double>(count_) * s2_) *this = Recentered();
}

ValueMoments ValueMoments::RecenteredAt(double k) const {
  if (count_ == 0) return ValueMoments();
  const long double n = static_cast<long double>(count_);
  const long double d = static_cast<long double>(shift_) - k;  // a − k = (a − K) + d
  const long double s2 = s2_ + d * (2 * s1_ + n * d);
  return ValueMoments(count_, k, s1_ + n * d, s2 > 0 ? s2 : 0);
}

ValueMoments ValueMoments::Recentered() const {
  if (count_ == 0) return ValueMoments();
  return RecenteredAt(static_cast<double>(mean()));
}

// k = double(K_a + (S1_a + S1_b + n_b·(K_b − K_a)) / (n_a + n_b)), the union's
// mean rounded to double; each part recentered at k (RecenteredAt: d = K − k,
// S1' = S1 + n·d, S2' = max(0, S2 + d·(2·S1 + n·d)), with that part's n, K);
// then n = n_a + n_b, S1 = S1_a' + S1_b', S2 = S2_a' + S2_b'
// (buffers/REFERENCE.md §6). An empty part: the other.
ValueMoments Merge(const ValueMoments& a, const ValueMoments& b) {
  if (a.count_ == 0) return b;
  if (b.count_ == 0) return a;
  const uint64_t count = a.count_ + b.count_;
  const long double mean = a.shift_ + (a.s1_ + b.s1_ + b.count_ * (static_cast<long double>(b.shift_) - a.shift_)) /
                                          static_cast<long double>(count);
  const double k = static_cast<double>(mean);
  const ValueMoments ak = a.RecenteredAt(k);
  const ValueMoments bk = b.RecenteredAt(k);
  return ValueMoments(count, k, ak.s1_ + bk.s1_, ak.s2_ + bk.s2_);
}

// The part P recentered at the total's shift K_T (d = K_P − K_T:
// S1_P' = S1_P + n_P·d, S2_P' = max(0, S2_P + d·(2·S1_P + n_P·d))); then
// n = n_T − n_P, S1 = S1_T − S1_P', S2 = S2_T − S2_P' about K_T, recentered at
// its mean rounded to double (buffers/REFERENCE.md §6). P empty: the total;
// P the whole total: empty.
ValueMoments Unmerge(const ValueMoments& total, const ValueMoments& part) {
  assert(part.count_ <= total.count_);
  if (part.count_ == 0) return total;
  if (part.count_ == total.count_) return ValueMoments();
  const ValueMoments pk = part.RecenteredAt(total.shift_);
  return ValueMoments(total.count_ - part.count_, total.shift_, total.s1_ - pk.s1_, total.s2_ - pk.s2_).Recentered();
}

// ---- Extremes -----------------------------------------------------------------

Extremes Extremes::Of(std::span<const double> values) {
  Extremes e;
  e.Append(values);
  return e;
}

void Extremes::Append(std::span<const double> values) {
  // `v < m ? v : m` keeps m when v is NaN: NaN cells are skipped.
  // Two independent vector pairs so the compare chains overlap.
  const size_t n = values.size();
  const double* a = values.data();
  Vec2 lo0 = {min, min}, hi0 = {max, max}, lo1 = lo0, hi1 = hi0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const Vec2 v0 = LoadVec2(a + i);
    const Vec2 v1 = LoadVec2(a + i + 2);
    lo0 = v0 < lo0 ? v0 : lo0;
    hi0 = v0 > hi0 ? v0 : hi0;
    lo1 = v1 < lo1 ? v1 : lo1;
    hi1 = v1 > hi1 ? v1 : hi1;
  }
  const Vec2 lo = lo0 < lo1 ? lo0 : lo1;
  const Vec2 hi = hi0 > hi1 ? hi0 : hi1;
  min = lo[0] < lo[1] ? lo[0] : lo[1];
  max = hi[0] > hi[1] ? hi[0] : hi[1];
  for (; i < n; ++i) {
    if (a[i] < min) min = a[i];
    if (a[i] > max) max = a[i];
  }
}

Extremes Merge(const Extremes& a, const Extremes& b) {
  return Extremes{std::min(a.min, b.min), std::max(a.max, b.max)};
}

// ---- derived statistics -------------------------------------------------------

long double Sum(const IndexMoments& range) { return range.moment(0); }

Result<long double> Mean(const ValueMoments& range) {
  if (range.count() == 0) return Empty("mean");
  return range.mean();
}

namespace {

// Σ(a − mean)² / (count − ddof), errors naming `stat`.
Result<long double> VarianceFor(std::string_view stat, const ValueMoments& range, int ddof) {
  if (ddof < 0) return Status::InvalidArgument(stat, "ddof must be >= 0");
  if (range.count() == 0) return Empty(stat);
  if (range.count() <= static_cast<uint64_t>(ddof)) {
    return Status::InvalidArgument(stat, "ddof " + std::to_string(ddof) + " needs more than " + std::to_string(ddof) +
                                             " cells, the range has " + std::to_string(range.count()));
  }
  return range.central_sum_of_squares() / static_cast<long double>(range.count() - ddof);
}

}  // namespace

Result<long double> Variance(const ValueMoments& range, int ddof) { return VarianceFor("var", range, ddof); }

Result<long double> StdDev(const ValueMoments& range, int ddof) {
  Result<long double> var = VarianceFor("std", range, ddof);
  if (!var.ok()) return var.status();
  return std::sqrt(var.value());
}

Result<double> Min(const Extremes& range) {
  if (range.empty()) return Status::InvalidArgument("min", "the range is empty or all NaN");
  return range.min;
}

Result<double> Max(const Extremes& range) {
  if (range.empty()) return Status::InvalidArgument("max", "the range is empty or all NaN");
  return range.max;
}

Result<MomentTerms> Moments(const IndexMoments& range, uint64_t p, int k, long double c) {
  if (k < 0) return Status::InvalidArgument("moment", "the order must be >= 0");
  if (k > range.order()) return OrderTooHigh("moment", "order", k, range.order());
  MomentTerms terms = ShiftTo(range.Truncated(k), c - static_cast<long double>(p));
  return terms;
}

Result<long double> Moment(const IndexMoments& range, uint64_t p, int k, long double c) {
  Result<MomentTerms> terms = Moments(range, p, k, c);
  if (!terms.ok()) return terms.status();
  return terms.value()[k];
}

Result<long double> CenterOfMass(const IndexMoments& range, uint64_t p) {
  if (range.order() < 1) return NeedsOrder("com", 1, range.order());
  if (range.count() == 0) return Empty("com");
  if (range.moment(0) == 0) return Status::InvalidArgument("com", "the values sum to 0");
  return static_cast<long double>(p) + range.moment(1) / range.moment(0);
}

Result<long double> Spread(const IndexMoments& range) {
  if (range.order() < 2) return NeedsOrder("spread", 2, range.order());
  if (range.count() == 0) return Empty("spread");
  const long double m0 = range.moment(0), m1 = range.moment(1), m2 = range.moment(2);
  if (m0 == 0) return Status::InvalidArgument("spread", "the values sum to 0");
  // ratio = (M2 − g·M1)/M0 = Σ (x − g)² a_x / Σ a_x with g = M1/M0; it
  // cancels to a few ulps of M2/M0. Spread = sqrt(ratio).
  const long double g = m1 / m0;
  const long double ratio = (m2 - g * m1) / m0;
  if (ratio >= 0) return std::sqrt(ratio);
  // A negative ratio is rounding, answered 0, when −ratio <= 64·ε_ld·|M2/M0|
  // (ε_ld: the long double epsilon, 2^-63 on x87); a larger one means values
  // of mixed sign: InvalidArgument.
  const long double rounding = 64 * std::numeric_limits<long double>::epsilon() * std::fabs(m2 / m0);
  if (-ratio <= rounding) return 0.0L;
  return Status::InvalidArgument("spread", "values of mixed sign make the weighted index variance negative");
}

Result<MomentTerms> PolyFit(const IndexMoments& range, int degree) {
  if (degree < 0) return Status::InvalidArgument("polyfit", "the degree must be >= 0");
  if (degree > range.order()) return OrderTooHigh("polyfit", "degree", degree, range.order());
  if (range.count() == 0) return Empty("polyfit");
  if (range.count() <= static_cast<uint64_t>(degree)) {
    return Status::InvalidArgument("polyfit", "a degree-" + std::to_string(degree) + " fit needs at least " +
                                                  std::to_string(degree + 1) + " cells, the range has " +
                                                  std::to_string(range.count()));
  }
  MomentTerms coefficients{};
  const std::span<const long double> moments(range.terms().data(), degree + 1);
  if (!FitPolynomial(range.count(), moments, std::span(coefficients.data(), degree + 1))) {
    return Status::InvalidArgument("polyfit", "the normal equations are singular");
  }
  return coefficients;
}

bool SetWideKernelsForTesting(bool on) {
#ifdef MOMENTA_WIDE_KERNELS
  if (on && !CpuHasAvx2()) return false;
  wide_kernels.store(on, std::memory_order_relaxed);
  return true;
#else
  return !on;
#endif
}

}  // namespace momenta
