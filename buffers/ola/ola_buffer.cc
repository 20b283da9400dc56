#include "buffers/ola/ola_buffer.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace momenta {
namespace {

// f_t(x) = (x − p)^t for p <= x < q, else 0; t = 0..N−1, into out.
void Weight(uint64_t x, uint64_t p, uint64_t q, int nodes, long double* out) {
  if (x < p || x >= q) {
    std::fill(out, out + nodes, 0.0L);
    return;
  }
  const long double d = static_cast<long double>(x - p);
  long double power = 1;
  for (int t = 0; t < nodes; ++t) {
    out[t] = power;
    power *= d;
  }
}

// Adds `delta` at `point` in a short list of (point, delta) pairs.
void AddDelta(std::vector<std::pair<uint64_t, long double>>& list, uint64_t point, long double delta) {
  for (auto& [p, d] : list)
    if (p == point) {
      d += delta;
      return;
    }
  list.emplace_back(point, delta);
}

}  // namespace

// ---------------------------------------------------------------------------
// Build.

OlaBuffer::Builder::Builder(const OlaLayout& layout)
    : layout_(layout), stencil_(layout.nodes(), layout.bin()), acc_(layout.slots(), 0.0L) {}

// Level 1 from the cells: a node cell j·b adds to V_1(j); a non-node cell
// i = k·b + r adds W_{s+l,i}·a_i to V_1(s + l), l < N.
Status OlaBuffer::Builder::Append(std::span<const double> cells) {
  if (cells.size() > layout_.length() - next_)
    return Status::InvalidArgument("ola", "more cells appended than the array's " + std::to_string(layout_.length()));
  const uint64_t b = layout_.bin();
  const uint64_t m = layout_.last_point(1);
  const int N = layout_.nodes();
  for (double a : cells) {
    const uint64_t i = next_++;
    if (!std::isfinite(a))
      return Status::InvalidArgument("ola", "cell " + std::to_string(i) +
                                                " is not finite: the Ola buffer holds finite values only "
                                                "(the default buffer, hbb, counts NaN and infinities apart)");
    if (a == 0) continue;
    const uint64_t k = i / b, r = i % b;
    if (r == 0) {
      acc_[layout_.SlotOf(1, k)] += a;
      continue;
    }
    if (k != bin_) {
      FlushBin();
      bin_ = k;
    }
    bin_first_ = stencil_.FirstNode(k, m);
    if (const long double* row = stencil_.InteriorRow(k, r, m)) {
      for (int l = 0; l < N; ++l) bin_sums_[l] += row[l] * a;
    } else {
      const OlaWeights w = stencil_.Of(k, r, m);
      for (int l = 0; l < N; ++l) bin_sums_[l] += w.w[l] * a;
    }
  }
  return Status::OK();
}

void OlaBuffer::Builder::FlushBin() {
  if (bin_ == UINT64_MAX) return;
  for (int l = 0; l < layout_.nodes(); ++l) {
    acc_[layout_.SlotOf(1, bin_first_ + l)] += bin_sums_[l];
    bin_sums_[l] = 0;
  }
  bin_ = UINT64_MAX;
}

Status OlaBuffer::Builder::AppendZeros(uint64_t count) {
  if (count > layout_.length() - next_)
    return Status::InvalidArgument("ola", "more cells appended than the array's " + std::to_string(layout_.length()));
  next_ += count;
  return Status::OK();
}

// Level ℓ + 1 from level ℓ, for ℓ = 1..L−1: V_{ℓ+1}(j) = V_ℓ(j·b) +
// Σ_{non-node i} W_{j,i} V_ℓ(i). In place V_ℓ(j·b) and V_{ℓ+1}(j) share a
// slot, and the non-node slots read are never the ones written, so the levels
// build in one array.
OlaBuffer OlaBuffer::Builder::Finish() {
  assert(next_ == layout_.length());
  FlushBin();
  const uint64_t b = layout_.bin();
  const int N = layout_.nodes();
  for (int level = 1; level < layout_.levels(); ++level) {
    const uint64_t m = layout_.last_point(level + 1);
    // Explicit levels: V_{ℓ+1}(j) starts as V_ℓ(j·b), as the shared slot does in
    // place, so both sum in the same order and hold the same numbers.
    if (layout_.storage() == OlaStorage::kExplicitLevels)
      for (uint64_t j = 0; j <= m; ++j) acc_[layout_.SlotOf(level + 1, j)] = acc_[layout_.SlotOf(level, j * b)];
    for (uint64_t i = 0; i <= layout_.last_point(level); ++i) {
      const long double v = acc_[layout_.SlotOf(level, i)];
      const uint64_t k = i / b, r = i % b;
      if (r == 0 || v == 0) continue;
      const OlaWeights w = stencil_.Of(k, r, m);
      for (int l = 0; l < N; ++l) acc_[layout_.SlotOf(level + 1, w.first + l)] += w.w[l] * v;
    }
  }
  std::vector<double> slots(acc_.size());
  for (size_t s = 0; s < acc_.size(); ++s) slots[s] = static_cast<double>(acc_[s]);
  return OlaBuffer(layout_, std::move(slots));
}

Result<OlaBuffer> OlaBuffer::Build(const OlaOptions& options, std::span<const double> cells) {
  auto layout = OlaLayout::Make(options, cells.size());
  if (!layout.ok()) return layout.status();
  Builder builder(*layout);
  MOMENTA_RETURN_IF_ERROR(builder.Append(cells));
  return builder.Finish();
}

Result<OlaBuffer> OlaBuffer::FromSlots(const OlaLayout& layout, std::vector<double> slots) {
  if (slots.size() != layout.slots())
    return Status::InvalidArgument(
        "ola", "expected " + std::to_string(layout.slots()) + " slots, got " + std::to_string(slots.size()));
  for (size_t s = 0; s < slots.size(); ++s)
    if (!std::isfinite(slots[s])) return Status::InvalidArgument("ola", "slot " + std::to_string(s) + " is not finite");
  return OlaBuffer(layout, std::move(slots));
}

// ---------------------------------------------------------------------------
// Update: a delta δ at level-ℓ point i moves up as W·δ to the stencil's nodes
// of level ℓ + 1 (a node point moves to i/b unchanged). Each stored value on
// the way changes by its delta: level ℓ >= 1 non-node points (and, explicit,
// node points), and level L's points.

Status OlaBuffer::Update(uint64_t i, double old_value, double new_value, std::vector<uint64_t>* changed) {
  if (i >= layout_.length())
    return Status::OutOfRange("ola",
                              "cell " + std::to_string(i) + " is past the array's " + std::to_string(layout_.length()));
  if (!std::isfinite(new_value))
    return Status::InvalidArgument(
        "ola", "cell " + std::to_string(i) + " would not be finite: the Ola buffer holds finite values only");
  const long double delta = static_cast<long double>(new_value) - static_cast<long double>(old_value);
  if (delta == 0) return Status::OK();
  Propagate(i, delta, [&](int level, uint64_t point, long double d) {
    const uint64_t at = layout_.SlotOf(level, point);
    double& slot = slots_[at];
    slot = static_cast<double>(static_cast<long double>(slot) + d);
    if (changed) changed->push_back(at);
  });
  return Status::OK();
}

void OlaBuffer::Propagate(uint64_t i, long double delta,
                          const std::function<void(int, uint64_t, long double)>& store) const {
  const uint64_t b = layout_.bin();
  const int N = layout_.nodes();
  const bool explicit_levels = layout_.storage() == OlaStorage::kExplicitLevels;
  std::vector<std::pair<uint64_t, long double>> cur{{i, delta}}, next;
  for (int level = 0; level < layout_.levels(); ++level) {
    next.clear();
    const uint64_t m = layout_.last_point(level + 1);
    for (const auto& [point, d] : cur) {
      const uint64_t k = point / b, r = point % b;
      if (level >= 1 && (r != 0 || explicit_levels)) store(level, point, d);
      if (r == 0) {
        AddDelta(next, k, d);
        continue;
      }
      const OlaWeights w = stencil_.Of(k, r, m);
      for (int l = 0; l < N; ++l) AddDelta(next, w.first + l, w.w[l] * d);
    }
    std::swap(cur, next);
  }
  for (const auto& [point, d] : cur) store(layout_.levels(), point, d);
}

std::vector<std::pair<int, uint64_t>> OlaBuffer::PointsOf(uint64_t i) const {
  assert(i < layout_.length());
  std::vector<std::pair<int, uint64_t>> points;
  Propagate(i, 1, [&](int level, uint64_t point, long double) { points.emplace_back(level, point); });
  return points;
}

// V_ℓ(j) = V_{ℓ−1}(j·b) + Σ_{non-node i of level ℓ−1} W_{j,i} V_{ℓ−1}(i), over the
// bins k whose stencil holds j (within [j − N, j + N]); level 0 is the array's cells.
Status OlaBuffer::Recompute(std::span<const std::pair<int, uint64_t>> points, const CellReader& read,
                            std::vector<uint64_t>* changed) {
  if (layout_.storage() != OlaStorage::kExplicitLevels)
    return Status::InvalidArgument("ola", "values are recomputed only with explicit levels");
  const uint64_t b = layout_.bin(), n = layout_.length();
  const uint64_t N = static_cast<uint64_t>(layout_.nodes());
  std::vector<double> cells;
  for (const auto& point : points) {
    // Plain names, not a structured binding: the lambda below captures them
    // (C++20 allows capturing a binding; clang 14, Debian 12's, does not).
    const int level = point.first;
    const uint64_t j = point.second;
    assert(level >= 1 && level <= layout_.levels() && j <= layout_.last_point(level));
    const uint64_t m = layout_.last_point(level);  // bins 0..m−1 of level − 1
    const uint64_t k_lo = j > N ? j - N : 0, k_hi = std::min(m - 1, j + N);
    // Level − 1's points [k_lo·b, (k_hi + 1)·b], the node j·b among them.
    const uint64_t first = k_lo * b, last = std::min((k_hi + 1) * b, layout_.last_point(level - 1));
    auto below = [&](uint64_t i) -> long double {
      if (level - 1 >= 1) return slots_[layout_.SlotOf(level - 1, i)];
      return i < n ? cells[i - first] : 0.0L;  // padding: zeros
    };
    if (level == 1) {
      const uint64_t end = std::min(last + 1, n);
      cells.assign(end > first ? end - first : 0, 0.0);
      if (!cells.empty()) MOMENTA_RETURN_IF_ERROR(read({first, end}, cells.data()));
    }
    long double v = below(j * b);
    for (uint64_t k = k_lo; k <= k_hi; ++k) {
      const uint64_t s = stencil_.FirstNode(k, m);
      if (j < s || j >= s + N) continue;
      for (uint64_t r = 1; r < b; ++r) {
        const long double x = below(k * b + r);
        if (x == 0) continue;
        v += stencil_.Of(k, r, m).w[j - s] * x;
      }
    }
    const uint64_t at = layout_.SlotOf(level, j);
    slots_[at] = static_cast<double>(v);
    if (changed) changed->push_back(at);
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Query.

// For a jump of f at cell x (x = p > 0, or x = q < n'), with B = b^(ℓ+1) and
// K = ⌊x/B⌋, the bins k of level ℓ + 1 whose stencil nodes s..s+N−1 straddle
// x (sB < x <= (s+N−1)B) are, interior (s = k − M + 1), within [K − M, K + M];
// clamped at the left end (s = 0) only when x <= (N − 1)B, then [0, M − 1]
// holds them; at the right end (s = m − N + 1) only when x > (m − N + 1)B,
// then [m − M, m − 1]. Elsewhere f − I f = 0 (I reproduces the polynomial).
std::vector<std::pair<uint64_t, uint64_t>> OlaBuffer::Windows(int level, uint64_t p, uint64_t q) const {
  const uint64_t B = layout_.span(level + 1);
  const uint64_t m = layout_.last_point(level + 1);  // bins 0..m−1
  const uint64_t M = static_cast<uint64_t>(layout_.nodes() / 2);
  const uint64_t N = static_cast<uint64_t>(layout_.nodes());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  auto add = [&](uint64_t lo, uint64_t hi) {  // [lo, hi] clipped to [0, m − 1]
    hi = std::min(hi, m - 1);
    if (lo <= hi) out.emplace_back(lo, hi);
  };
  for (uint64_t x : {p, q}) {
    if (x == 0 || x >= layout_.padded_length()) continue;  // no jump inside the padded array
    const uint64_t K = x / B;
    add(K >= M ? K - M : 0, K + M);
    if (x <= N * B) add(0, M - 1);
    if (x + N * B > m * B) add(m >= M ? m - M : 0, m - 1);
  }
  std::sort(out.begin(), out.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& w : out) {
    if (!merged.empty() && w.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, w.second);
    else
      merged.push_back(w);
  }
  return merged;
}

std::vector<IndexRange> OlaBuffer::CellsFor(uint64_t p, uint64_t q) const {
  assert(p <= q && q <= layout_.length());
  std::vector<IndexRange> runs;
  if (p == q) return runs;
  const uint64_t b = layout_.bin(), n = layout_.length();
  for (const auto& [lo, hi] : Windows(0, p, q)) {
    // The non-node cells of bins lo..hi: [lo·b + 1, (hi + 1)·b), clipped to the array.
    const uint64_t begin = std::min(lo * b + 1, n), end = std::min((hi + 1) * b, n);
    runs.push_back({begin, std::max(begin, end)});
  }
  return runs;
}

IndexMoments OlaBuffer::Answer(uint64_t p, uint64_t q, std::span<const std::span<const double>> cells) const {
  assert(p <= q && q <= layout_.length());
  return Accumulate(p, q, 0, cells);
}

IndexMoments OlaBuffer::AnswerAbove(uint64_t p, uint64_t q, int first_level) const {
  assert(p <= q && q <= layout_.length());
  assert(first_level >= 1 && first_level <= layout_.levels());
  return Accumulate(p, q, first_level, {});
}

IndexMoments OlaBuffer::Accumulate(uint64_t p, uint64_t q, int first_level,
                                   std::span<const std::span<const double>> cells) const {
  const int N = layout_.nodes();
  MomentTerms acc{};
  if (p == q) return IndexMoments::FromTerms(N - 1, 0, acc);
  const uint64_t b = layout_.bin(), n = layout_.length();
  long double fx[kOlaNodeLimit], fy[kOlaNodeLimit][kOlaNodeLimit];

  // Corrections Σ_i (f(i·b^ℓ) − (I_ℓ f)(i)) · V_ℓ(i) over the windows' non-node points,
  // bin by bin: the stencil's nodes s..s+N−1 are the bin's (Of's `first` depends on k
  // only), so with S_l = Σ_r W_l(r) V(i) and D_t = Σ_r f_t(i) V(i) over the bin's points
  //   Σ_r (f_t(i) − Σ_l W_l(r) f_t(node l)) V(i) = D_t − Σ_l S_l f_t(node l),
  // N + N multiply-adds per point instead of N·N.
  for (int level = first_level; level < layout_.levels(); ++level) {
    const uint64_t here = layout_.span(level), above = layout_.span(level + 1);
    const uint64_t m = layout_.last_point(level + 1);
    const auto windows = Windows(level, p, q);
    assert(level > 0 || windows.size() == cells.size());
    for (size_t wi = 0; wi < windows.size(); ++wi) {
      const auto [lo, hi] = windows[wi];
      for (uint64_t k = lo; k <= hi; ++k) {
        long double S[kOlaNodeLimit] = {}, D[kOlaNodeLimit] = {};
        bool any = false;  // a non-zero point in the bin
        for (uint64_t r = 1; r < b; ++r) {
          const uint64_t i = k * b + r;
          long double v;
          if (level == 0) {
            if (i >= n) break;  // padding: zeros
            v = cells[wi][i - (lo * b + 1)];
          } else {
            v = slots_[layout_.SlotOf(level, i)];
          }
          if (v == 0) continue;
          any = true;
          if (const long double* row = stencil_.InteriorRow(k, r, m)) {
            for (int l = 0; l < N; ++l) S[l] += row[l] * v;
          } else {
            const OlaWeights w = stencil_.Of(k, r, m);
            for (int l = 0; l < N; ++l) S[l] += w.w[l] * v;
          }
          const uint64_t x = i * here;
          if (x >= p && x < q) {
            const long double d = static_cast<long double>(x - p);
            long double power = v;
            for (int t = 0; t < N; ++t, power *= d) D[t] += power;
          }
        }
        if (!any) continue;
        const uint64_t first = stencil_.FirstNode(k, m);
        for (int l = 0; l < N; ++l) Weight((first + l) * above, p, q, N, fy[l]);
        for (int t = 0; t < N; ++t) {
          long double correction = D[t];
          for (int l = 0; l < N; ++l) correction -= S[l] * fy[l][t];
          acc[t] += correction;
        }
      }
    }
  }
  // The top level: Σ_{p <= j·b^L < q} f(j·b^L) V_L(j).
  const int L = layout_.levels();
  const uint64_t top = layout_.span(L);
  for (uint64_t j = (p + top - 1) / top; j * top < q; ++j) {
    const long double v = slots_[layout_.SlotOf(L, j)];
    if (v == 0) continue;
    Weight(j * top, p, q, N, fx);
    for (int t = 0; t < N; ++t) acc[t] += fx[t] * v;
  }
  return IndexMoments::FromTerms(N - 1, q - p, acc);
}

std::vector<IndexRange> OlaBuffer::SlotsFor(uint64_t p, uint64_t q) const {
  assert(p <= q && q <= layout_.length());
  std::vector<IndexRange> runs;
  if (p == q) return runs;
  const uint64_t b = layout_.bin();
  // Level ℓ in 1..L−1: the non-node points of the windows' bins (Answer's
  // loop), [lo·b + 1, (hi + 1)·b − 1] clipped to m_ℓ, as one run of slots
  // from the first to the last (contiguous with explicit levels; in place a
  // run covers the points at stride b^(ℓ−1) and what lies between).
  for (int level = 1; level < layout_.levels(); ++level) {
    const uint64_t m = layout_.last_point(level);
    for (const auto& [lo, hi] : Windows(level, p, q)) {
      const uint64_t first = lo * b + 1, last = std::min((hi + 1) * b - 1, m);
      if (first > last) continue;
      runs.push_back({layout_.SlotOf(level, first), layout_.SlotOf(level, last) + 1});
    }
  }
  // The top level's points inside the range.
  const int L = layout_.levels();
  const uint64_t top = layout_.span(L);
  const uint64_t j0 = (p + top - 1) / top, j1 = (q - 1) / top;  // j·top in [p, q)
  if (j0 <= j1) runs.push_back({layout_.SlotOf(L, j0), layout_.SlotOf(L, j1) + 1});
  std::sort(runs.begin(), runs.end(), [](const IndexRange& a, const IndexRange& b) { return a.begin < b.begin; });
  return runs;
}

Result<IndexMoments> OlaBuffer::Query(uint64_t p, uint64_t q, const CellReader& read) const {
  const std::vector<IndexRange> runs = CellsFor(p, q);
  std::vector<std::vector<double>> data(runs.size());
  std::vector<std::span<const double>> views(runs.size());
  for (size_t k = 0; k < runs.size(); ++k) {
    data[k].resize(runs[k].size());
    if (runs[k].size() > 0) MOMENTA_RETURN_IF_ERROR(read(runs[k], data[k].data()));
    views[k] = data[k];
  }
  return Answer(p, q, views);
}

}  // namespace momenta
