#include "stream/window/misra_gries.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <functional>

namespace momenta {

void NormalizeEntries(std::vector<ItemEntry>* entries, std::vector<uint64_t>* scratch) {
  auto& e = *entries;
  std::vector<uint64_t> own;
  SortEntriesByItem(e.data(), e.data() + e.size(), scratch ? scratch : &own);
  CombineEqualKeys<ItemEntry, &ItemEntry::item, &ItemEntry::count>(&e);
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
  std::nth_element(counts.begin(), counts.begin() + static_cast<ptrdiff_t>(m), counts.end(), std::greater<uint32_t>());
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
  CombineEqualKeys<ItemEntry, &ItemEntry::item, &ItemEntry::count>(&e);
}

uint32_t LookupEntry(const std::vector<ItemEntry>& entries, int64_t item) {
  auto it = std::lower_bound(entries.begin(), entries.end(), item,
                             [](const ItemEntry& a, int64_t key) { return a.item < key; });
  return it != entries.end() && it->item == item ? it->count : 0;
}

}  // namespace momenta
