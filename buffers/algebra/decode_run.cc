// NodeCodec::DecodeRun's kernels: a run of sibling nodes summed in one pass
// per part, in long double (any CPU) or compensated in doubles, four nodes
// to a vector (CPUs with AVX2 and FMA).
//
// This file is compiled with -ffp-contract=off (CMakeLists.txt): the
// error-free sums below need every a + b and a·b rounded on its own, with
// the fused products written out where they are meant.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "buffers/algebra/node_slots.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MOMENTA_COMPENSATED_RUNS 1
#endif

namespace momenta {
namespace {

long double Join(const double* slot) { return static_cast<long double>(slot[0]) + static_cast<long double>(slot[1]); }

NonFiniteCounts Plus(const NonFiniteCounts& a, const NonFiniteCounts& b) {
  return {a.nan + b.nan, a.pos_inf + b.pos_inf, a.neg_inf + b.neg_inf};
}

// The run's index moments from B_{u,p} = Σ_k k^p R_{k,u} (below):
// M_t = Σ_{u<=t} C(t,u) w^(t−u) B_{u,t−u}, w the nodes' span.
template <int J>
MomentTerms RunMoments(const long double (&b)[J + 1][J + 1], uint64_t span) {
  MomentTerms m{};
  long double span_power[J + 1];  // w^p
  span_power[0] = 1;
  for (int p = 1; p <= J; ++p) span_power[p] = span_power[p - 1] * static_cast<long double>(span);
  for (int t = 0; t <= J; ++t)
    for (int u = 0; u <= t; ++u) m[t] += kBinomial[t][u] * span_power[t - u] * b[u][t - u];
  return m;
}

// Index moments: node k's moments R_{k,u} are about its own start o_k = k·w,
// so the run's (formula F of Merge, summed over the nodes at once)
//   M_t = Σ_k Σ_{u<=t} C(t,u) o_k^(t−u) R_{k,u} = Σ_{u<=t} C(t,u) w^(t−u) B_{u,t−u},
//   B_{u,p} = Σ_k k^p R_{k,u}
// (the terms Merge adds, in another order: k^p and w^p are exact).
// Value moments: pass 1 finds the run's mean, K = double(Σ_k (n_k K_k + S1_k) / n)
// (n_k the finite cells of node k, K_k its shift); pass 2 adds each node
// recentered at K (RecenteredAt: d_k = K_k − K, S1 += S1_k + n_k d_k,
// S2 += max(0, S2_k + d_k (2 S1_k + n_k d_k))). Each part's S2 about K is
// its central sum plus n_k (mean_k − K)² >= 0, so the sum cancels nothing:
// the same shift and the same accuracy as merging the nodes pairwise.
// DecodeRun for order J in long double, fixed at compile time so the
// accumulators stay in registers (the formulas: above).
template <int J>
RangeSummary DecodeRunOf(const double* first, uint64_t count, uint64_t span, uint64_t last_span) {
  const NodeSlots at(J);
  const size_t stride = NodeCodec(J).doubles();
  RangeSummary s(J);

  // Pass 1: non-finite counts, exact sums, extremes and the mean's parts.
  long double mass = 0;  // Σ_k (n_k K_k + S1_k)
  uint64_t finite = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const double* node = first + k * stride;
    const NonFiniteCounts c = NodeCounts(node, at);
    s.nonfinite = Plus(s.nonfinite, c);
    const uint64_t n = NodeFiniteCount(k + 1 == count ? last_span : span, c);
    if (n > 0) {
      mass += static_cast<long double>(n) * node[at.shift()] + Join(node + at.s1());
      finite += n;
    }
    s.extremes = Merge(s.extremes, Extremes{node[at.min()], node[at.max()]});
    Int128 exact;
    std::memcpy(&exact, node + at.exact(), sizeof exact);
    s.exact_sum += exact;
    s.exact_sumsq += Int192::Load(node + at.sumsq());
  }

  // Pass 2: index moments (B_{u,p}) and value moments about K.
  const double shift = finite > 0 ? static_cast<double>(mass / static_cast<long double>(finite)) : 0.0;
  long double b[J + 1][J + 1] = {};  // b[u][p], u + p <= J
  long double s1 = 0, s2 = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const double* node = first + k * stride;
    long double power[J + 1];  // k^p
    power[0] = 1;
    for (int p = 1; p <= J; ++p) power[p] = power[p - 1] * static_cast<long double>(k);
    for (int u = 0; u <= J; ++u) {
      const long double r = static_cast<long double>(node[u]) + static_cast<long double>(node[at.terms + u]);
      for (int p = 0; p + u <= J; ++p) b[u][p] += power[p] * r;
    }
    const uint64_t n = NodeFiniteCount(k + 1 == count ? last_span : span, NodeCounts(node, at));
    if (n == 0) continue;
    const long double nk = static_cast<long double>(n);
    const long double d = static_cast<long double>(node[at.shift()]) - shift;
    const long double s1k = Join(node + at.s1()), s2k = Join(node + at.s2());
    const long double part = s2k + d * (2 * s1k + nk * d);
    s1 += s1k + nk * d;
    s2 += part > 0 ? part : 0;
  }
  const MomentTerms m = RunMoments<J>(b, span);
  s.index = IndexMoments::FromTerms(J, (count - 1) * span + last_span, m);
  if (finite > 0) s.values = ValueMoments::FromParts(finite, shift, s1, s2);
  return s;
}

using LongDoubleKernel = RangeSummary (*)(const double*, uint64_t, uint64_t, uint64_t);
template <size_t... J>
constexpr std::array<LongDoubleKernel, sizeof...(J)> MakeLongDoubleKernels(std::index_sequence<J...>) {
  return {&DecodeRunOf<static_cast<int>(J)>...};
}
constexpr auto kLongDoubleKernels = MakeLongDoubleKernels(std::make_index_sequence<kMaxMomentTerms>{});

#ifdef MOMENTA_COMPENSATED_RUNS
// The same formulas, each sum carried as a pair s + c of doubles (Ogita, Rump
// and Oishi's Sum2: every addition's rounding error, found exactly by
// TwoSum, is added into c; every product's, found exactly by one FMA, too),
// lane l of a vector holding the nodes k ≡ l (mod 4) of the run.
//
// Why the accuracy bound 1e-9·Σ|i − c|^j |a_i| still holds, with room: each
// term enters exactly (a node's stored value + residue is an exact pair;
// k^p < 2^53 is exact; k^p·value is split exactly into product + FMA
// error), so the only roundings are those of c (each at most 2^-53 of the
// terms' own rounding errors, themselves at most 2^-53 of a term: ~2^-100
// of Σ|terms| for a run of up to 64 nodes) and of k^p·residue (2^-53 of a
// residue, itself 2^-64 of its value: ~2^-117). The long double kernel
// rounds every addition at 2^-64 of the running sum: up to 63·2^-64 of
// Σ|terms|. So every B_{u,p}, S1 and S2 here is at least as close to the
// exact sum of the nodes' stored values as the long double one before the
// last step, which is unchanged: s + c rounded once into long double and the
// moments M_t combined from them as above (RunMoments). The recentring
// S2_k + d_k(2 S1_k + n_k d_k) is likewise exact up to ~2^-100 of its
// magnitude (d_k = K_k − K exactly by TwoSum; n_k < 2^53 exact). Holes (all
// zero nodes) and lanes past the run's end add exact zeros.
using V4 = double __attribute__((vector_size(32)));
using Mask4 = int64_t __attribute__((vector_size(32)));

struct Sum2 {
  V4 s = {}, c = {};
};

// a.s + x into a.s, the addition's rounding error into a.c (TwoSum).
__attribute__((target("avx2,fma"), always_inline)) inline void Add(Sum2& a, V4 x) {
  const V4 t = a.s + x;
  const V4 z = t - a.s;
  a.c += (a.s - (t - z)) + (x - z);
  a.s = t;
}

// The rounding error of p = round(a·b): a·b − p exactly (one FMA).
__attribute__((target("avx2,fma"), always_inline)) inline V4 ProductError(V4 a, V4 b, V4 p) {
  return reinterpret_cast<V4>(
      _mm256_fmsub_pd(reinterpret_cast<__m256d>(a), reinterpret_cast<__m256d>(b), reinterpret_cast<__m256d>(p)));
}

// The four lanes of a pair, summed with TwoSum, rounded once into long double.
long double Total(const Sum2& a) {
  double s = 0, c = 0;
  for (int l = 0; l < 4; ++l) {
    const double t = s + a.s[l];
    const double z = t - s;
    c += (s - (t - z)) + (a.s[l] - z) + a.c[l];
    s = t;
  }
  return static_cast<long double>(s) + static_cast<long double>(c);
}

// Stands in for the nodes past a run's end in its last group of four.
constexpr double kZeroNode[2 * kMaxMomentOrder + 20] = {};

// Slot f of the four nodes.
__attribute__((target("avx2,fma"), always_inline)) inline V4 Field(const double* const (&node)[4], size_t f) {
  return V4{node[0][f], node[1][f], node[2][f], node[3][f]};
}

// Pass 1: non-finite counts, exact sums, extremes (accumulated in locals, so
// they stay in registers), and the run's mean's parts Σ_k (n_k K_k + S1_k)
// as pairs, four nodes a vector (n_k K_k split exactly by an FMA).
template <int J>
__attribute__((target("avx2,fma"))) long double RunMass(const double* first, uint64_t count, uint64_t span,
                                                        uint64_t last_span, RangeSummary& s, uint64_t* finite,
                                                        V4* finite4) {
  const NodeSlots at(J);
  const size_t stride = 2 * J + 20;
  NonFiniteCounts counts;
  double lo = s.extremes.min, hi = s.extremes.max;
  Int128 exact_sum = 0;
  Int192 exact_sumsq;
  uint64_t total = 0;
  Sum2 mass;
  for (uint64_t k = 0; k < count; k += 4) {
    const double* node[4];
    V4 n;
    for (int l = 0; l < 4; ++l) {
      const uint64_t j = k + static_cast<uint64_t>(l);
      if (j >= count) {
        node[l] = kZeroNode;
        n[l] = 0;
        continue;
      }
      node[l] = first + j * stride;
      const NonFiniteCounts c = NodeCounts(node[l], at);
      counts = Plus(counts, c);
      const uint64_t f = NodeFiniteCount(j + 1 == count ? last_span : span, c);
      total += f;
      n[l] = static_cast<double>(f);
      lo = std::min(lo, node[l][at.min()]);  // as Merge(Extremes)
      hi = std::max(hi, node[l][at.max()]);
      Int128 exact;
      std::memcpy(&exact, node[l] + at.exact(), sizeof exact);
      exact_sum += exact;
      uint64_t sq[3];
      std::memcpy(sq, node[l] + at.sumsq(), sizeof sq);
      if ((sq[0] | sq[1] | sq[2]) != 0) exact_sumsq += Int192::Load(node[l] + at.sumsq());
    }
    finite4[k / 4] = n;
    const V4 zero = {};
    const Mask4 live = n > zero;
    const V4 shift = live ? Field(node, at.shift()) : zero;
    const V4 p = n * shift;
    Add(mass, p);
    Add(mass, live ? Field(node, at.s1()) : zero);
    mass.c += ProductError(n, shift, p) + (live ? Field(node, at.s1() + 1) : zero);
  }
  s.nonfinite = counts;
  s.extremes = Extremes{lo, hi};
  s.exact_sum = exact_sum;
  s.exact_sumsq = exact_sumsq;
  *finite = total;
  return Total(mass);
}

// Pass 2 for the four nodes k .. k+3 (node[l], n[l] finite cells; 0 past the
// end): B_{u,p} += k^p R_{k,u}; S1, S2 += the node recentred at K.
template <int J>
__attribute__((target("avx2,fma"), always_inline)) inline void AddFour(const double* const (&node)[4], V4 kv, V4 n,
                                                                       V4 shift, Sum2 (&b)[J + 1][J + 1], Sum2& s1,
                                                                       Sum2& s2) {
  const NodeSlots at(J);
  const V4 zero = {};
  V4 power[J + 1];  // k^p, exact (k < 64, p <= 8: below 2^48)
  power[0] = V4{1, 1, 1, 1};
  for (int p = 1; p <= J; ++p) power[p] = power[p - 1] * kv;
  for (int u = 0; u <= J; ++u) {
    const V4 hi = Field(node, u), lo = Field(node, at.terms + u);
    Add(b[u][0], hi);
    b[u][0].c += lo;
    for (int p = 1; p + u <= J; ++p) {
      const V4 pr = power[p] * hi;
      Add(b[u][p], pr);
      b[u][p].c += ProductError(power[p], hi, pr) + power[p] * lo;
    }
  }
  const Mask4 live = n > zero;
  const V4 k = Field(node, at.shift());
  const V4 s1h = live ? Field(node, at.s1()) : zero, s1l = live ? Field(node, at.s1() + 1) : zero;
  const V4 s2h = Field(node, at.s2()), s2l = Field(node, at.s2() + 1);
  // d = K_k − K exactly: dh + dl (TwoSum).
  const V4 dh = k - shift;
  const V4 dz = dh - k;
  const V4 dl = (k - (dh - dz)) + (-shift - dz);
  // n·d = ndh + nde (nde: the product's error and n·dl).
  const V4 ndh = live ? n * dh : zero;
  const V4 nde = live ? ProductError(n, dh, ndh) + n * dl : zero;
  Add(s1, s1h);
  s1.c += s1l;
  Add(s1, ndh);
  s1.c += nde;
  // g = 2 S1_k + n d = gh + gl.
  const V4 two_s1 = s1h + s1h;
  const V4 gh = two_s1 + ndh;
  const V4 gz = gh - two_s1;
  const V4 gl = (two_s1 - (gh - gz)) + (ndh - gz) + (s1l + s1l) + nde;
  // part = S2_k + d·g = th + tl, counted when it is > 0 (as RecenteredAt).
  const V4 ph = dh * gh;
  const V4 pl = ProductError(dh, gh, ph) + dh * gl + dl * gh;
  const V4 th = s2h + ph;
  const V4 tz = th - s2h;
  const V4 tl = (s2h - (th - tz)) + (ph - tz) + s2l + pl;
  const Mask4 keep = live & ((th + tl) > zero);
  Add(s2, keep ? th : zero);
  s2.c += keep ? tl : zero;
}

template <int J>
__attribute__((target("avx2,fma"))) RangeSummary CompensatedRunOf(const double* first, uint64_t count, uint64_t span,
                                                                  uint64_t last_span) {
  const size_t stride = 2 * J + 20;
  RangeSummary s(J);
  uint64_t finite = 0;
  V4 finite4[kMaxFanout / 4];  // n_k, four nodes a vector (count <= kMaxFanout)
  const long double mass = RunMass<J>(first, count, span, last_span, s, &finite, finite4);
  const double shift = finite > 0 ? static_cast<double>(mass / static_cast<long double>(finite)) : 0.0;
  const V4 shift4 = {shift, shift, shift, shift};
  Sum2 b[J + 1][J + 1];
  Sum2 s1, s2;
  for (uint64_t k = 0; k < count; k += 4) {
    const double* node[4];
    for (int l = 0; l < 4; ++l) {
      const uint64_t j = k + static_cast<uint64_t>(l);
      node[l] = j < count ? first + j * stride : kZeroNode;
    }
    const double kd = static_cast<double>(k);
    AddFour<J>(node, V4{kd, kd + 1, kd + 2, kd + 3}, finite4[k / 4], shift4, b, s1, s2);
  }
  long double bt[J + 1][J + 1] = {};
  for (int u = 0; u <= J; ++u)
    for (int p = 0; p + u <= J; ++p) bt[u][p] = Total(b[u][p]);
  s.index = IndexMoments::FromTerms(J, (count - 1) * span + last_span, RunMoments<J>(bt, span));
  if (finite > 0) s.values = ValueMoments::FromParts(finite, shift, Total(s1), Total(s2));
  return s;
}

template <size_t... J>
constexpr std::array<LongDoubleKernel, sizeof...(J)> MakeCompensatedKernels(std::index_sequence<J...>) {
  return {&CompensatedRunOf<static_cast<int>(J)>...};
}
constexpr auto kCompensatedKernels = MakeCompensatedKernels(std::make_index_sequence<kMaxMomentTerms>{});

bool CpuHasAvx2Fma() {
  __builtin_cpu_init();  // this may run before the runtime's own initializer
  return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
}
std::atomic<bool> compensated{CpuHasAvx2Fma()};
#else
std::atomic<bool> compensated{false};
#endif

}  // namespace

RangeSummary DecodeRunLongDouble(int order, const double* first, uint64_t count, uint64_t span, uint64_t last_span) {
  return kLongDoubleKernels[order](first, count, span, last_span);
}

bool DecodeRunCompensated(int order, const double* first, uint64_t count, uint64_t span, uint64_t last_span,
                          RangeSummary* out) {
#ifdef MOMENTA_COMPENSATED_RUNS
  // n_k and k^p must be exact doubles: spans below 2^53 cells, k < 64.
  if (!compensated.load(std::memory_order_relaxed) || count > kMaxFanout || span > (uint64_t{1} << 53)) return false;
  *out = kCompensatedKernels[order](first, count, span, last_span);
  return true;
#else
  (void)order, (void)first, (void)count, (void)span, (void)last_span, (void)out;
  return false;
#endif
}

bool SetCompensatedRunsForTesting(bool on) {
#ifdef MOMENTA_COMPENSATED_RUNS
  if (on && !CpuHasAvx2Fma()) return false;
  compensated.store(on);
  return true;
#else
  return !on;
#endif
}

}  // namespace momenta
