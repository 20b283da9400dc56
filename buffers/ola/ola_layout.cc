#include "buffers/ola/ola_layout.h"

#include <cmath>
#include <string>

#include "buffers/ola/ola_stencil.h"

namespace momenta {
namespace {

// a·b, or false when it does not fit 64 bits.
bool MulFits(uint64_t a, uint64_t b, uint64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

Result<OlaLayout> OlaLayout::Make(const OlaOptions& options, uint64_t length) {
  const int N = options.nodes;
  if (N < 2 || N % 2 != 0)
    return Status::InvalidArgument(
        "ola", "stencils have an even number of nodes N >= 2 (orders 0..N−1); got N = " + std::to_string(N));
  if (N > kOlaMaxNodes)
    return Status::InvalidArgument(
        "ola", "order " + std::to_string(N - 1) + " needs " + std::to_string(N) +
                   " nodes; the Ola buffer serves orders up to " + std::to_string(kOlaMaxNodes - 1) +
                   " (N <= " + std::to_string(kOlaMaxNodes) +
                   "): past that the one-sided weights near the array's ends break the accuracy bound "
                   "(buffers/ola/OLA.md); the default buffer (hbb) serves orders up to 8");
  if (options.bin < 2) return Status::InvalidArgument("ola", "the bin size must be at least 2");

  OlaLayout out;
  out.length_ = length;
  out.bin_ = options.bin;
  out.nodes_ = N;
  out.storage_ = options.storage;
  out.lebesgue_ = OlaStencil(N, options.bin).Lebesgue();

  const uint64_t base = length > 0 ? length - 1 : 0;  // n − 1: the cells after the first
  const uint64_t min_last = static_cast<uint64_t>(N - 1);
  const long double max_growth = options.max_growth > 0 ? options.max_growth : kOlaMaxGrowth;
  // The most levels allowed: b^L <= base/(N − 1) (beyond L = 1), growth, max_levels.
  int levels = 1;
  uint64_t span = options.bin;
  while (options.max_levels == 0 || levels < options.max_levels) {
    uint64_t next;
    if (!MulFits(span, options.bin, &next) || next > base / min_last) break;
    if (std::pow(out.lebesgue_, static_cast<long double>(levels + 1)) > max_growth) break;
    span = next;
    ++levels;
  }
  out.levels_ = levels;

  // n' = m_L·b^L + 1 with m_L = max(⌈(n − 1)/b^L⌉, N − 1).
  uint64_t last_top = base / span + (base % span != 0 ? 1 : 0);
  if (last_top < min_last) last_top = min_last;
  uint64_t padded;
  if (!MulFits(last_top, span, &padded) || padded == UINT64_MAX)
    return Status::InvalidArgument("ola", "the array is too long for bin " + std::to_string(options.bin));
  out.padded_ = padded + 1;

  out.span_.resize(levels + 1);
  out.last_point_.resize(levels + 1);
  out.span_[0] = 1;
  for (int l = 1; l <= levels; ++l) out.span_[l] = out.span_[l - 1] * options.bin;
  for (int l = 0; l <= levels; ++l) out.last_point_[l] = padded / out.span_[l];

  if (options.storage == OlaStorage::kInPlace) {
    out.slots_ = out.last_point_[1] + 1;
  } else {
    out.level_base_.assign(levels + 1, 0);
    uint64_t total = 0;
    for (int l = 1; l <= levels; ++l) {
      out.level_base_[l] = total;
      total += out.last_point_[l] + 1;
    }
    out.slots_ = total;
  }
  return out;
}

long double OlaLayout::growth() const { return std::pow(lebesgue_, static_cast<long double>(levels_)); }

}  // namespace momenta
