// Answering a range [p, q) from a MomentTree and its array: the plan's whole
// nodes come from the RAM tier (mapping) or the disk tier (reads), the two
// partial leaves at the ends from the array; every read of a query — array
// ends and disk-tier node runs — goes out in ONE batch (IoBackend::
// ReadBatchWith), so a cold query costs about one random-read latency.
//
// A partial leaf is read on its shorter side when the caller does not need
// extremes: the leaf's stored summary minus the complement's (min/max are not
// invertible, so queries that need them read the side itself). When that
// subtraction could lose the part's variance (its error bound is not within
// 1e-10 of the part's own Σ(a − mean)²), the part is read and summarized
// directly: one more read after the batch, only then.
//
// Whole nodes are combined a run of siblings at a time (NodeCodec::
// DecodeRun: one pass, no merge per node), then the runs and the end pieces
// merged left to right.
//
// A batch of ranges (SummarizeRanges) is planned range by range, then every
// read of every range goes out in one batch as well, coalesced per file
// (storage/io/read_coalescing.h: adjacent ranges share their edge leaves), so
// the device sees them at its queue depth.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "storage/io/read_coalescing.h"

namespace momenta {

// The summary of [p, q); its extremes are meaningful only when need_extremes.
// Every node it takes is checked first (MomentTree::VerifyNodeOnce: once per
// node and write_epoch in this process, see buffers/tree/verified_nodes.h): a
// damaged one gives Corruption("<tree>: <what>: node N of level L fails its
// check") and no answer. (A reader racing a writer may see a node mid-change: the
// seqlock around the call discards such a result, error or not.)
// REQUIRES: p <= q <= array.length(); tree describes array
Result<RangeSummary> SummarizeRange(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q, bool need_extremes,
                                    QueryCost* cost = nullptr);

// The backends a query reads through; null: the array's and the tree's own.
// (A thread sharing a read-only BufferedArray brings backends of its own:
// one backend serves one thread at a time.)
// arena: where the batch's reads land, kept from call to call (null: a new one).
struct QueryIo {
  IoBackend* array = nullptr;
  IoBackend* tree = nullptr;
  ReadArena* arena = nullptr;
};

// The summaries of ranges[k], in order, into *out (resized to ranges.size());
// costs (optional) receives each range's QueryCost, whose bytes and requests
// count the range's own reads before coalescing. read (optional) is added
// what the batch asked of the backends: its reads once overlapping and
// touching ones were merged (plus any read a piece needed on its own), so
// its bytes are what the devices were asked for. Same checks as
// SummarizeRange; an error (I/O, a damaged node) gives no answers at all.
// REQUIRES: begin <= end <= array.length() for every range; tree describes array
[[nodiscard]] Status SummarizeRanges(MomentTree& tree, ArrayFile& array, std::span<const IndexRange> ranges,
                                     bool need_extremes, std::vector<RangeSummary>* out,
                                     std::vector<QueryCost>* costs = nullptr, QueryIo io = {},
                                     QueryCost* read = nullptr);

// Tests only: `hook` runs in every batch between the residency check (which
// pieces are summed from the mapping) and the sums, e.g. to truncate the file
// there. Empty: none. Not thread-safe; set it while no query runs.
void SetAfterResidencyCheckForTesting(std::function<void()> hook);

}  // namespace momenta
