#include "bench/moments/query_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace momenta::moments_driver {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(k, 1, v.size()) - 1];
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  assert(!v.empty());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

QueryRow Summarize(const QueryRun& run, int kind) {
  std::vector<double> t;
  QueryRow row;
  for (const Sample& s : run.samples) {
    if (kind >= 0 && s.kind != kind) continue;
    t.push_back(s.seconds);
    row.array_bytes += static_cast<double>(s.cost.array_bytes);
    row.tier_bytes += static_cast<double>(s.cost.tier_bytes);
    row.requests += static_cast<double>(s.cost.requests);
  }
  row.n = t.size();
  if (t.empty()) return row;
  row.p50 = Percentile(t, 0.5);
  row.p99 = Percentile(t, 0.99);
  row.mean = Mean(t);
  row.max = *std::max_element(t.begin(), t.end());
  row.array_bytes /= static_cast<double>(row.n);
  row.tier_bytes /= static_cast<double>(row.n);
  row.requests /= static_cast<double>(row.n);
  return row;
}

}  // namespace momenta::moments_driver
