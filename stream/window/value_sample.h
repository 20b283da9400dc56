// Weighted value samples: the per-bucket payload of WindowQuantiles
// (stream/window/window_quantiles.h).
//
// A sample of n items is a list of (value, weight) sorted by value, values
// distinct, weights summing to n, with a rank error bound e: for every x,
// |sum of weights of values <= x  -  true number of items <= x| <= e.
// Built exactly (e = 0) from raw values; merging two samples adds their
// bounds (the rank functions add). Collapse trades entries for error: it cuts
// the list into runs of consecutive entries weighing at most T together and
// moves each run's weight onto its weighted median, which shifts any rank by
// at most half a run: e grows by <= T/2 and at most 2n/T + 1 entries remain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace momenta {

#pragma pack(push, 4)
struct ValueEntry {
  int64_t value;
  uint32_t weight;  // a bucket holds < 2^31 items (kMaxBucketItems)
};
#pragma pack(pop)
static_assert(sizeof(ValueEntry) == 12);

// Sorts by value and adds up the weights of equal values (key_count_sort.h;
// *scratch reused when given).
void NormalizeSample(std::vector<ValueEntry>* entries, std::vector<uint64_t>* scratch = nullptr);
// Collapses runs of weight <= T (see above); returns the error added (the
// largest weight any run moved past a value). REQUIRES: normalized
double CollapseSample(std::vector<ValueEntry>* entries, double T);
// Sum of weights of values <= x. REQUIRES: normalized
uint64_t SampleRank(const std::vector<ValueEntry>& entries, int64_t x);

}  // namespace momenta
