#include "stream/misra_gries.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <functional>

namespace momenta {

namespace {

// Entries with equal items adjacent -> one entry per item, counts summed.
void CombineAdjacent(std::vector<ItemEntry>& e) {
  size_t out = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (out > 0 && e[out - 1].item == e[i].item) {
      e[out - 1].count += e[i].count;
    } else {
      e[out++] = e[i];
    }
  }
  e.resize(out);
}

}  // namespace

namespace {

// Sorts the n words at w by bits [low, low + bits) (the bits above are zero;
// equal keys end in any order), 8 bits a pass, through tmp (n words);
// returns where the sorted words are (w or tmp). Branch-free: comparison
// sorts of random ids mispredict about half their comparisons.
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

}  // namespace

void SortEntriesByItem(ItemEntry* begin, ItemEntry* end, std::vector<uint64_t>* scratch) {
  const size_t n = static_cast<size_t>(end - begin);
  if (n < 2) return;
  int64_t lo = begin->item, hi = begin->item;
  uint32_t max_count = 0;
  for (const ItemEntry* x = begin; x != end; ++x) {
    lo = std::min(lo, x->item);
    hi = std::max(hi, x->item);
    max_count = std::max(max_count, x->count);
  }
  auto width = [](uint64_t v) { return v == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(v)); };
  const unsigned count_bits = width(max_count);
  const unsigned key_bits = width(static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo));
  if (key_bits + count_bits > 64) {
    std::sort(begin, end, [](const ItemEntry& a, const ItemEntry& b) { return a.item < b.item; });
    return;
  }
  // Each entry as one word: (item - lo) above its count; word order is item order.
  scratch->resize(2 * n);  // the words, then the radix sort's second buffer
  uint64_t* w = scratch->data();
  for (size_t i = 0; i < n; ++i)
    w[i] = (static_cast<uint64_t>(begin[i].item) - static_cast<uint64_t>(lo)) << count_bits | begin[i].count;
  if (n >= 64 && key_bits <= 32) {
    w = RadixSortWords(w, w + n, n, count_bits, key_bits);
  } else {
    std::sort(w, w + n);
  }
  const uint64_t count_mask = (uint64_t{1} << count_bits) - 1;  // count_bits <= 32
  for (size_t i = 0; i < n; ++i) {
    begin[i].item = static_cast<int64_t>(static_cast<uint64_t>(lo) + (w[i] >> count_bits));
    begin[i].count = static_cast<uint32_t>(w[i] & count_mask);
  }
}

void NormalizeEntries(std::vector<ItemEntry>* entries, std::vector<uint64_t>* scratch) {
  auto& e = *entries;
  std::vector<uint64_t> own;
  SortEntriesByItem(e.data(), e.data() + e.size(), scratch ? scratch : &own);
  CombineAdjacent(e);
}

uint32_t ReduceEntries(std::vector<ItemEntry>* entries, size_t m, std::vector<ItemDecrement>* cut,
                       std::vector<uint32_t>* scratch) {
  assert(m >= 1);
  auto& e = *entries;
  if (e.size() <= m) return 0;
  std::vector<uint32_t> own;
  std::vector<uint32_t>& counts = scratch ? *scratch : own;
  counts.resize(e.size());
  for (size_t i = 0; i < e.size(); ++i) counts[i] = e[i].count;
  // v = the (m+1)-th largest count.
  std::nth_element(counts.begin(), counts.begin() + static_cast<ptrdiff_t>(m), counts.end(),
                   std::greater<uint32_t>());
  const uint32_t v = counts[m];
  size_t out = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const uint32_t take = std::min(v, e[i].count);
    if (cut) cut->push_back({e[i].item, take});
    if (e[i].count > v) {
      e[out] = e[i];
      e[out].count -= v;
      ++out;
    }
  }
  e.resize(out);
  assert(out <= m);
  return v;
}

void MergeSortedRuns(std::vector<ItemEntry>* entries, std::vector<size_t>* bounds, std::vector<ItemEntry>* scratch) {
  auto& e = *entries;
  auto& r = *bounds;
  assert(!r.empty() && r.front() == 0 && r.back() == e.size());
  auto less = [](const ItemEntry& a, const ItemEntry& b) { return a.item < b.item; };
  // Bottom-up: merge runs pairwise into scratch, then swap, until one remains.
  while (r.size() > 2) {
    scratch->resize(e.size());
    size_t k = 0;  // new bounds overwrite old ones already read (k <= i / 2)
    for (size_t i = 0; i + 1 < r.size(); i += 2) {
      const size_t lo = r[i], mid = r[i + 1], hi = i + 2 < r.size() ? r[i + 2] : mid;
      std::merge(e.begin() + static_cast<ptrdiff_t>(lo), e.begin() + static_cast<ptrdiff_t>(mid),
                 e.begin() + static_cast<ptrdiff_t>(mid), e.begin() + static_cast<ptrdiff_t>(hi),
                 scratch->begin() + static_cast<ptrdiff_t>(lo), less);
      r[k++] = lo;
    }
    r[k++] = e.size();
    r.resize(k);
    e.swap(*scratch);
  }
  // Equal items are now adjacent.
  CombineAdjacent(e);
}

uint32_t LookupEntry(const std::vector<ItemEntry>& entries, int64_t item) {
  auto it = std::lower_bound(entries.begin(), entries.end(), item,
                             [](const ItemEntry& a, int64_t key) { return a.item < key; });
  return it != entries.end() && it->item == item ? it->count : 0;
}

}  // namespace momenta
