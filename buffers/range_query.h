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
// 1e-10 of the part's own Σ(a − mean)²), the part is read and summarised
// directly: one more read after the batch, only then.
#pragma once

#include <cstdint>

#include "buffers/moment_tree.h"
#include "buffers/range_summary.h"
#include "storage/array_file.h"

namespace momenta {

// The summary of [p, q); its extremes are meaningful only when need_extremes.
// Every node it takes is checked first (MomentTree::VerifyNode): a damaged
// one gives Corruption("<tree>: <what>: node N of level L fails its check")
// and no answer. (A reader racing a writer may see a node mid-change: the
// seqlock around the call discards such a result, error or not.)
// REQUIRES: p <= q <= array.length(); tree describes array
Result<RangeSummary> SummarizeRange(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q,
                                    bool need_extremes, QueryCost* cost = nullptr);

}  // namespace momenta
