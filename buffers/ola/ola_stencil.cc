#include "buffers/ola/ola_stencil.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace momenta {

OlaStencil::OlaStencil(int nodes, uint64_t bin) : nodes_(nodes), bin_(bin) {
  assert(nodes >= 2 && nodes <= kOlaNodeLimit && nodes % 2 == 0 && bin >= 2);
  for (int l = 0; l < nodes_; ++l) {
    long double d = 1;
    for (int k = 0; k < nodes_; ++k)
      if (k != l) d *= static_cast<long double>(l - k);
    denominators_[l] = d;
  }
  if (bin_ <= kTableBins) {
    interior_.resize((bin_ - 1) * nodes_);
    std::array<long double, kOlaNodeLimit> w{};
    const int M = nodes_ / 2;
    for (uint64_t r = 1; r < bin_; ++r) {
      Basis(static_cast<long double>(M - 1) + static_cast<long double>(r) / bin_, w);
      std::copy(w.begin(), w.begin() + nodes_, interior_.begin() + (r - 1) * nodes_);
    }
  }
}

// L_l(u) = Π_{l' != l} (u − l') / Π_{l' != l} (l − l').
void OlaStencil::Basis(long double u, std::array<long double, kOlaNodeLimit>& w) const {
  for (int l = 0; l < nodes_; ++l) {
    long double num = 1;
    for (int k = 0; k < nodes_; ++k)
      if (k != l) num *= u - static_cast<long double>(k);
    w[l] = num / denominators_[l];
  }
}

OlaWeights OlaStencil::Of(uint64_t k, uint64_t r, uint64_t m) const {
  assert(r > 0 && r < bin_ && k < m && m + 1 >= static_cast<uint64_t>(nodes_));
  const uint64_t M = static_cast<uint64_t>(nodes_ / 2);
  const uint64_t lowest = 0, highest = m + 1 - nodes_;
  // s = k − M + 1 clamped to [0, m − N + 1].
  uint64_t s = k + 1 >= M ? k + 1 - M : lowest;
  s = std::min(s, highest);
  OlaWeights out;
  out.first = s;
  if (s + M - 1 == k && !interior_.empty()) {
    std::copy(interior_.begin() + (r - 1) * nodes_, interior_.begin() + r * nodes_, out.w.begin());
  } else {
    Basis(static_cast<long double>(k - s) + static_cast<long double>(r) / bin_, out.w);
  }
  return out;
}

long double OlaStencil::Lebesgue() const {
  // Stencil kinds by the bin's place within its stencil: k − s = 0..N − 2
  // (M − 1 is the interior one; the others occur only clamped, near the
  // ends; the right end mirrors the left, so positions cover both).
  const uint64_t steps = std::min<uint64_t>(bin_ - 1, kTableBins);
  long double worst = 1;  // node points: one weight of 1
  std::array<long double, kOlaNodeLimit> w{};
  for (int pos = 0; pos + 1 < nodes_; ++pos) {
    for (uint64_t t = 1; t <= steps; ++t) {
      const uint64_t r = steps == bin_ - 1 ? t : std::max<uint64_t>(1, t * (bin_ - 1) / steps);
      Basis(static_cast<long double>(pos) + static_cast<long double>(r) / bin_, w);
      long double total = 0;
      for (int l = 0; l < nodes_; ++l) total += std::fabs(w[l]);
      worst = std::max(worst, total);
    }
  }
  return worst;
}

}  // namespace momenta
