// Misra-Gries summaries as sorted arrays: the per-bucket payload of
// ItemCounts (stream/window/item_counts.h).
//
// A summary of n items is a list of (item, count) sorted by item, counts > 0,
// with an undercount bound e: every item's true count t satisfies
// count <= t <= count + e (absent items count 0). Reduce keeps at most m
// entries by subtracting the (m+1)-th largest count v from every entry: that
// removes at least (m+1) v items' worth of counts, so e grows by
// v <= removed / (m+1), and over any history of merges and reductions
// e <= (n - sum of counts) / (m+1) <= n / (m+1) (Agarwal et al., "Mergeable
// summaries"): merging never compounds the error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stream/window/key_count_sort.h"

namespace momenta {

#pragma pack(push, 4)
struct ItemEntry {
  int64_t item;
  uint32_t count;  // a bucket holds < 2^31 items (kMaxBucketItems)
};
#pragma pack(pop)
static_assert(sizeof(ItemEntry) == 12);

// What a reduction took away from each item, for callers that aggregate.
struct ItemDecrement {
  int64_t item;
  uint32_t amount;
};

// Sorts [begin, end) by item (equal items in no set order; key_count_sort.h).
inline void SortEntriesByItem(ItemEntry* begin, ItemEntry* end, std::vector<uint64_t>* scratch) {
  SortByKey<ItemEntry, &ItemEntry::item, &ItemEntry::count>(begin, end, scratch);
}

// Sorts by item and adds up the counts of equal items.
void NormalizeEntries(std::vector<ItemEntry>* entries, std::vector<uint64_t>* scratch = nullptr);

// Keeps at most m entries (MG reduction); returns v, the amount by which the
// undercount bound grows (0 when nothing was cut). Appends every decrement to
// *cut when cut is not null. Keeps the entries' order; uses *scratch when
// given (else allocates). REQUIRES: items distinct, m >= 1
uint32_t ReduceEntries(std::vector<ItemEntry>* entries, size_t m, std::vector<ItemDecrement>* cut,
                       std::vector<uint32_t>* scratch = nullptr);
// *entries holds sorted runs of normalized entries back to back, run i in
// [(*bounds)[i], (*bounds)[i+1]) (bounds: 0, ..., entries->size()). Merges
// them into one normalized list (equal items added up) in
// O(total * log(runs)), using *scratch; leaves *bounds unspecified.
void MergeSortedRuns(std::vector<ItemEntry>* entries, std::vector<size_t>* bounds, std::vector<ItemEntry>* scratch);

// The count stored for item (0 when absent). REQUIRES: entries normalized
uint32_t LookupEntry(const std::vector<ItemEntry>& entries, int64_t item);

}  // namespace momenta
