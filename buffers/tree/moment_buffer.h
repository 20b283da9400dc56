// MomentBuffer: what the facade (BufferedArray) asks of its moment buffer,
// whatever its kind. Every kind keeps the moment tree (its header is the
// buffer's state and seqlock, its nodes the value moments and extremes); a
// kind may keep more beside it, which answers the ranges' index moments:
//   - kind hbb (TreeBuffer, tree_buffer.h): the tree alone, of order J;
//   - kind ola (OlaTreeBuffer, buffers/ola/ola_tree_buffer.h): an order-0
//     tree and the Ola buffer's file, whose index moments (orders 0..N−1)
//     replace the tree's in every summary.
// The verbs follow the facade's paths: describe, answer (inside a consistent
// read), apply (inside a writer's chunk), recover (the log's replay), clean,
// verify. Opening and building (buffers/buffer_kind.h) choose the kind from
// the tree's header or options — the one place that does.
//
// Not thread-safe beyond what the facade guarantees: the answer verbs may run
// from several query threads at once (they only read), the rest from the one
// thread that holds the facade's tree exclusively or is its writer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/tree/buffer_description.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/range_query.h"
#include "buffers/tree/tree_build.h"
#include "storage/array/array_file.h"
#include "storage/log/log_format.h"
#include "storage/util/status.h"

namespace momenta {

class OlaFile;  // buffers/ola/ola_file.h

class MomentBuffer {
 public:
  virtual ~MomentBuffer() = default;

  // ---- describe ----
  // The highest index-moment order a summary carries (the tree's J for kind
  // hbb, the Ola buffer's N − 1 for kind ola).
  virtual int index_order(const MomentTree& tree) const = 0;
  // Whether it keeps index moments of its own (IndexMoments answers from it
  // alone, reading none of the tree's partial leaves).
  virtual bool KeepsIndexMoments() const = 0;
  // The Ola buffer's file, or nullptr (kind hbb, or kind ola whose file
  // failed to open): for the progressive sum and tests, never for a branch.
  virtual const OlaFile* ola_file() const = 0;
  // Whether `message` (a Corruption) names a file of this buffer besides the
  // tree: damage the facade rebuilds for.
  virtual bool NamesFile(const std::string& message) const = 0;
  // What it keeps beside the tree, into *d (DescribeTree fills the rest;
  // kind hbb: nothing).
  virtual void Describe(BufferDescription* d) const = 0;

  // ---- answer (under the facade's consistent read; `io` as SummarizeRanges) ----
  // Replaces the index moments of out[k] (the tree's summaries of ranges[k])
  // with the kind's own; costs[k] (optional) and *attempt (optional) are
  // added what that read. Kind hbb: nothing to do.
  [[nodiscard]] virtual Status AddIndexMoments(const QueryIo& io, ArrayFile& array, std::span<const IndexRange> ranges,
                                               std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                               QueryCost* attempt) const = 0;
  // InvalidArgument naming the array unless IndexMoments can answer (kind
  // hbb: "has no Ola buffer"), before anything is read.
  [[nodiscard]] virtual Status CheckIndexAlone(const MomentTree& tree, const ArrayFile& array) const = 0;
  // The index moments of [p, q) from this buffer alone into *out, read
  // through `io`; cost (optional) receives what it read. A Corruption naming
  // the buffer's file when it is missing or damaged.
  [[nodiscard]] virtual Status IndexMoments(const QueryIo& io, ArrayFile& array, uint64_t p, uint64_t q,
                                            momenta::IndexMoments* out, QueryCost* cost) const = 0;

  // ---- apply (a writer's updates, inside the tree's seqlock) ----
  // InvalidArgument naming the array when `u` is a value this kind cannot hold.
  [[nodiscard]] virtual Status CheckValue(const ArrayFile& array, uint64_t index, const Value& value) const = 0;
  // Whether a chunk's records may update the tree once per node for the
  // whole chunk (log_sequence moved once); false: a record at a time.
  virtual bool GathersChunks() const = 0;
  // Record r (old -> new bytes of `dtype`) applied to the kind's own part.
  [[nodiscard]] virtual Status Update(DType dtype, const LogRecord& r) = 0;
  // The header says updating (on disk when `durable`).
  [[nodiscard]] virtual Status MarkUpdating(bool durable) = 0;
  // The checks of what changed since the last Seal, recomputed.
  virtual void Seal() = 0;
  // Clean as of `sequence` and `identity` (on disk when `durable`), before
  // the tree's clean header.
  [[nodiscard]] virtual Status MarkClean(uint64_t sequence, const ArrayIdentity& identity, bool durable) = 0;

  // ---- recover (the log's replay) ----
  // "" when the log may be replayed into this buffer as of `sequence` after
  // a writer died mid-update on this boot; else why not, in a phrase.
  virtual std::string ReplayableFor(uint64_t sequence) const = 0;
  // Record r was applied before the crash: what it changed is resealed.
  virtual void Touched(DType dtype, const LogRecord& r) = 0;
  // Record r may have reached part of this buffer (a writer killed inside
  // it): recomputed from the array as `read` gives it.
  [[nodiscard]] virtual Status Recompute(DType dtype, const LogRecord& r, const CellReader& read) = 0;

  // ---- verify ----
  // This buffer's own part against a fresh build from `array`: *checked is
  // added what was compared, each mismatch goes to `mismatch` (one line).
  [[nodiscard]] virtual Status Verify(ArrayFile& array, uint64_t* checked,
                                      const std::function<void(std::string)>& mismatch) const = 0;
};

}  // namespace momenta
