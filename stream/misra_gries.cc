#include "stream/misra_gries.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <functional>

namespace momenta {

void NormalizeEntries(std::vector<ItemEntry>* entries) {
  auto& e = *entries;
  std::sort(e.begin(), e.end(), [](const ItemEntry& a, const ItemEntry& b) { return a.item < b.item; });
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

uint32_t ReduceEntries(std::vector<ItemEntry>* entries, size_t m, std::vector<ItemDecrement>* cut) {
  assert(m >= 1);
  auto& e = *entries;
  if (e.size() <= m) return 0;
  std::vector<uint32_t> counts(e.size());
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

namespace {
std::vector<ItemEntry> MergeTwo(const std::vector<ItemEntry>& a, const std::vector<ItemEntry>& b) {
  std::vector<ItemEntry> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].item < b[j].item) {
      out.push_back(a[i++]);
    } else if (b[j].item < a[i].item) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].item, a[i].count + b[j].count});
      ++i;
      ++j;
    }
  }
  out.insert(out.end(), a.begin() + static_cast<ptrdiff_t>(i), a.end());
  out.insert(out.end(), b.begin() + static_cast<ptrdiff_t>(j), b.end());
  return out;
}
}  // namespace

std::vector<ItemEntry> MergeEntries(std::vector<std::vector<ItemEntry>*> runs) {
  if (runs.empty()) return {};
  // Bottom-up pairwise merging: O(total * log(runs)).
  std::vector<std::vector<ItemEntry>> level;
  level.reserve(runs.size());
  for (auto* r : runs) level.push_back(std::move(*r));
  while (level.size() > 1) {
    std::vector<std::vector<ItemEntry>> next;
    next.reserve((level.size() + 1) / 2);
    for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(MergeTwo(level[i], level[i + 1]));
    if (level.size() % 2) next.push_back(std::move(level.back()));
    level.swap(next);
  }
  return std::move(level[0]);
}

uint32_t LookupEntry(const std::vector<ItemEntry>& entries, int64_t item) {
  auto it = std::lower_bound(entries.begin(), entries.end(), item,
                             [](const ItemEntry& a, int64_t key) { return a.item < key; });
  return it != entries.end() && it->item == item ? it->count : 0;
}

}  // namespace momenta
