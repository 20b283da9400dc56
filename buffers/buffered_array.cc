// BufferedArray, the facade: its state and steps are BufferedArray::Impl
// (buffered_array_internal.h), and every public method forwards there. The
// steps live by role: opening (buffer_open.cc), queries (buffer_query.cc),
// updates, commits and rebuilds (buffer_update.cc), recovery
// (buffer_recover.cc), verify (buffer_verify.cc).
#include "buffers/buffered_array.h"

#include <utility>

#include "buffers/buffer_kind.h"
#include "buffers/buffered_array_internal.h"
#include "buffers/tree_maintenance.h"
#include "storage/array_store.h"

namespace momenta {

BufferedArray::Impl::Impl(std::unique_ptr<ArrayFile> array, std::string sidecar, const BufferedArrayOptions& options)
    : array_(std::move(array)),
      sidecar_(std::move(sidecar)),
      tree_path_(sidecar_ + "/tree"),
      options_(options),
      maintenance_(std::make_unique<TreeMaintenance>(*array_)) {
  buffer_ = TreeAloneBuffer(OlaPath());
}

BufferedArray::Impl::~Impl() { (void)Close(); }

BufferedArray::BufferedArray(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BufferedArray::~BufferedArray() = default;

ArrayFile& BufferedArray::array() { return *impl_->array_; }
int BufferedArray::index_order() const { return impl_->buffer_->index_order(*impl_->tree_); }
int BufferedArray::tree_order() const { return impl_->tree_->order(); }
uint64_t BufferedArray::leaf_span() const { return impl_->tree_->layout().leaf_span(); }
const std::string& BufferedArray::sidecar() const { return impl_->sidecar_; }
const std::string& BufferedArray::tree_path() const { return impl_->tree_path_; }
const OpenReport& BufferedArray::open_report() const { return impl_->open_report_; }
std::vector<std::string> BufferedArray::TakeNotices() { return impl_->TakeNotices(); }
uint64_t BufferedArray::length() const { return impl_->array_->length(); }
bool BufferedArray::writable() const { return impl_->log_ != nullptr; }
uint64_t BufferedArray::applied_sequence() const { return impl_->applied_sequence(); }

Result<RangeSummary> BufferedArray::Summarize(uint64_t p, uint64_t q, bool need_extremes, QueryCost* cost,
                                              uint64_t* as_of) {
  return impl_->Summarize(p, q, need_extremes, cost, as_of);
}

Result<IndexMoments> BufferedArray::SummarizeIndex(uint64_t p, uint64_t q, uint64_t* as_of, QueryCost* cost) {
  return impl_->SummarizeIndex(p, q, as_of, cost);
}

Status BufferedArray::SummarizeIndexBatch(std::span<const IndexRange> ranges, std::vector<IndexMoments>* out,
                                          std::vector<QueryCost>* costs) {
  return impl_->SummarizeIndexBatch(ranges, out, costs);
}

Status BufferedArray::SummarizeBatch(std::span<const IndexRange> ranges, bool need_extremes,
                                     std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                     std::vector<uint64_t>* as_of, QueryCost* read) {
  return impl_->SummarizeBatch(ranges, need_extremes, out, costs, as_of, read);
}

Status BufferedArray::Write(uint64_t first, std::span<const Value> values, int64_t time) {
  return impl_->Write(first, values, time);
}

Status BufferedArray::Apply(std::span<const IndexedValue> updates, size_t* applied) {
  return impl_->Apply(updates, applied);
}

Status BufferedArray::Commit() { return impl_->Commit(); }
Status BufferedArray::Close() { return impl_->Close(); }

Result<BuildStats> BufferedArray::Rebuild(const TreeOptions& options, const BuildProgress& progress) {
  return impl_->Rebuild(options, progress);
}

Result<VerifyReport> BufferedArray::Verify(const BuildProgress& progress) { return impl_->Verify(progress); }

}  // namespace momenta
