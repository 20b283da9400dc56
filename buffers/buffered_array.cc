// BufferedArray, the facade: every public method forwards to the role that
// does it (buffered_array_internal.h): opening and recovery (BufferOpening:
// buffer_open.cc, buffer_recover.cc), queries (ConsistentReads:
// buffer_query.cc), updates and commits (UpdatePath: buffer_update.cc),
// verify (buffer_verify.cc), all over one BufferState (buffer_state.cc);
// statistics in buffer_stats.cc.
#include "buffers/buffered_array.h"

#include <utility>

#include "buffers/buffer_kind.h"
#include "buffers/buffered_array_internal.h"
#include "buffers/tree/tree_maintenance.h"
#include "storage/array/array_store.h"

namespace momenta {

BufferedArray::BufferedArray(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BufferedArray::~BufferedArray() = default;

ArrayFile& BufferedArray::array() { return *impl_->state.array_; }
int BufferedArray::index_order() const { return impl_->state.buffer_->index_order(*impl_->state.tree_); }
int BufferedArray::tree_order() const { return impl_->state.tree_->order(); }
uint64_t BufferedArray::leaf_span() const { return impl_->state.tree_->layout().leaf_span(); }
int BufferedArray::levels() const { return impl_->state.tree_->layout().levels(); }
const char* BufferedArray::buffer_kind() const { return impl_->state.tree_->header().ola_nodes > 0 ? "ola" : "hbb"; }
const std::string& BufferedArray::sidecar() const { return impl_->state.sidecar_; }
const std::string& BufferedArray::tree_path() const { return impl_->state.tree_path_; }
const OpenReport& BufferedArray::open_report() const { return impl_->state.open_report_; }
std::vector<std::string> BufferedArray::TakeNotices() { return impl_->state.TakeNotices(); }
uint64_t BufferedArray::length() const { return impl_->state.array_->length(); }
bool BufferedArray::writable() const { return impl_->state.writer(); }
uint64_t BufferedArray::applied_sequence() const { return impl_->state.applied_sequence(); }

Result<RangeSummary> BufferedArray::Summarize(uint64_t p, uint64_t q, bool need_extremes, QueryCost* cost,
                                              uint64_t* as_of) {
  return impl_->reads.Summarize(p, q, need_extremes, cost, as_of);
}

Result<IndexMoments> BufferedArray::SummarizeIndex(uint64_t p, uint64_t q, uint64_t* as_of, QueryCost* cost) {
  return impl_->reads.SummarizeIndex(p, q, as_of, cost);
}

Status BufferedArray::SummarizeIndexBatch(std::span<const IndexRange> ranges, std::vector<IndexMoments>* out,
                                          std::vector<QueryCost>* costs) {
  return impl_->reads.SummarizeIndexBatch(ranges, out, costs);
}

Status BufferedArray::SummarizeBatch(std::span<const IndexRange> ranges, bool need_extremes,
                                     std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                     std::vector<uint64_t>* as_of, QueryCost* read) {
  return impl_->reads.SummarizeBatch(ranges, need_extremes, out, costs, as_of, read);
}

Status BufferedArray::Write(uint64_t first, std::span<const Value> values, int64_t time) {
  return impl_->updates.Write(first, values, time);
}

Status BufferedArray::Apply(std::span<const IndexedValue> updates, size_t* applied) {
  return impl_->updates.Apply(updates, applied);
}

Status BufferedArray::Commit() { return impl_->updates.Commit(); }
Status BufferedArray::Close() { return impl_->updates.Close(); }

Result<BuildStats> BufferedArray::Rebuild(const TreeOptions& options, const BuildProgress& progress) {
  return impl_->opening.Rebuild(options, progress);
}

Result<VerifyReport> BufferedArray::Verify(const BuildProgress& progress) {
  return VerifyBuffer(impl_->state, progress);
}

}  // namespace momenta
