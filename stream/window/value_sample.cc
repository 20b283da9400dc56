#include "stream/window/value_sample.h"

#include <algorithm>

#include "stream/window/key_count_sort.h"

namespace momenta {

void NormalizeSample(std::vector<ValueEntry>* entries, std::vector<uint64_t>* scratch) {
  std::vector<uint64_t> own;
  SortByKey<ValueEntry, &ValueEntry::value, &ValueEntry::weight>(entries->data(), entries->data() + entries->size(),
                                                                 scratch ? scratch : &own);
  CombineEqualKeys<ValueEntry, &ValueEntry::value, &ValueEntry::weight>(entries);
}

double CollapseSample(std::vector<ValueEntry>* entries, double T) {
  auto& e = *entries;
  double added = 0;
  size_t out = 0;
  size_t i = 0;
  while (i < e.size()) {
    // The run [i, j): as many entries as fit in T (at least one).
    double w = e[i].weight;
    size_t j = i + 1;
    while (j < e.size() && w + e[j].weight <= T) {
      w += e[j].weight;
      ++j;
    }
    if (j - i == 1) {
      e[out++] = e[i];
      i = j;
      continue;
    }
    // Weighted median c: mass before c < w/2, mass after c <= w/2.
    double before = 0;
    size_t c = i;
    while (before + e[c].weight < 0.5 * w) before += e[c++].weight;
    const double after = w - before - e[c].weight;
    added = std::max(added, std::max(before, after));
    e[out++] = {e[c].value, static_cast<uint32_t>(w)};
    i = j;
  }
  e.resize(out);
  return added;
}

uint64_t SampleRank(const std::vector<ValueEntry>& entries, int64_t x) {
  uint64_t r = 0;
  for (const ValueEntry& v : entries) {
    if (v.value > x) break;
    r += v.weight;
  }
  return r;
}

}  // namespace momenta
