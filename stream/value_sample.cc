#include "stream/value_sample.h"

#include <algorithm>

namespace momenta {

void NormalizeSample(std::vector<ValueEntry>* entries) {
  auto& e = *entries;
  std::sort(e.begin(), e.end(), [](const ValueEntry& a, const ValueEntry& b) { return a.value < b.value; });
  size_t out = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (out > 0 && e[out - 1].value == e[i].value) {
      e[out - 1].weight += e[i].weight;
    } else {
      e[out++] = e[i];
    }
  }
  e.resize(out);
}

void AbsorbRaw(std::vector<int64_t>* raw, std::vector<ValueEntry>* entries) {
  std::sort(raw->begin(), raw->end());
  std::vector<ValueEntry> fresh;
  for (size_t i = 0; i < raw->size();) {
    size_t j = i;
    while (j < raw->size() && (*raw)[j] == (*raw)[i]) ++j;
    fresh.push_back({(*raw)[i], static_cast<uint32_t>(j - i)});
    i = j;
  }
  raw->clear();
  if (entries->empty()) {
    entries->swap(fresh);
    return;
  }
  std::vector<ValueEntry> merged;
  merged.reserve(entries->size() + fresh.size());
  std::merge(entries->begin(), entries->end(), fresh.begin(), fresh.end(), std::back_inserter(merged),
             [](const ValueEntry& a, const ValueEntry& b) { return a.value < b.value; });
  entries->swap(merged);
  NormalizeSample(entries);  // combines equal values (already sorted: linear in practice)
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
