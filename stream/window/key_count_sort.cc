#include "stream/window/key_count_sort.h"

#include <cassert>
#include <utility>

namespace momenta {

uint64_t* RadixSortWords(uint64_t* w, uint64_t* tmp, size_t n, unsigned low, unsigned bits) {
  const unsigned passes = (bits + 7) / 8;
  assert(passes <= 4);
  uint32_t hist[4][256] = {};
  for (size_t i = 0; i < n; ++i)
    for (unsigned p = 0; p < passes; ++p) ++hist[p][(w[i] >> (low + 8 * p)) & 255];
  for (unsigned p = 0; p < passes; ++p) {
    uint32_t at = 0;
    for (uint32_t& h : hist[p]) {
      const uint32_t c = h;
      h = at;
      at += c;
    }
    const unsigned shift = low + 8 * p;
    for (size_t i = 0; i < n; ++i) tmp[hist[p][(w[i] >> shift) & 255]++] = w[i];
    std::swap(w, tmp);
  }
  return w;
}

}  // namespace momenta
