// Summaries of timed samples: percentiles, means, medians, and one row of
// the cold-query table.
#pragma once

#include <cstddef>
#include <vector>

#include "bench/moments/results.h"

namespace momenta::moments_driver {

// Nearest-rank percentile (p in [0, 1]) of unsorted samples; 0 when empty.
double Percentile(std::vector<double> v, double p);
// The arithmetic mean; 0 when empty.
double Mean(const std::vector<double>& v);
// The upper median (v[n / 2] once sorted). REQUIRES: !v.empty()
double Median(std::vector<double> v);

// Times and per-query costs of a run's samples of one kind.
struct QueryRow {
  double p50 = 0, p99 = 0, mean = 0, max = 0;
  double array_bytes = 0, tier_bytes = 0, requests = 0;  // means per query
  size_t n = 0;
};
// The samples of `kind` (-1: all); all zeros when there are none.
QueryRow Summarize(const QueryRun& run, int kind);

}  // namespace momenta::moments_driver
