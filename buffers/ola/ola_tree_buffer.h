// OlaTreeBuffer: kind ola's MomentBuffer (buffers/tree/moment_buffer.h) — an
// order-0 moment tree and, beside it, the Ola buffer's file (ola_file.h),
// whose index moments M_t(p, q), t = 0..N−1, replace the tree's in every
// summary (OLA.md states their bound). The file's writes follow the tree's:
// updated a record at a time inside the tree's seqlock (its recovery replays
// from the tree's log_sequence + 1, which must move per record), resealed at
// each chunk's end, clean just before the tree's clean header.
#pragma once

#include <memory>
#include <string>

#include "buffers/ola/ola_file.h"
#include "buffers/tree/moment_buffer.h"

namespace momenta {

class OlaTreeBuffer final : public MomentBuffer {
 public:
  explicit OlaTreeBuffer(std::unique_ptr<OlaFile> file) : file_(std::move(file)) {}

  int index_order(const MomentTree&) const override { return file_->layout().max_order(); }
  bool KeepsIndexMoments() const override { return true; }
  const OlaFile* ola_file() const override { return file_.get(); }
  bool NamesFile(const std::string& message) const override;
  void Describe(BufferDescription* d) const override;

  [[nodiscard]] Status AddIndexMoments(const QueryIo& io, ArrayFile& array, std::span<const IndexRange> ranges,
                                       std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                       QueryCost* attempt) const override;
  [[nodiscard]] Status CheckIndexAlone(const MomentTree&, const ArrayFile&) const override { return Status::OK(); }
  [[nodiscard]] Status IndexMoments(const QueryIo& io, ArrayFile& array, uint64_t p, uint64_t q,
                                    momenta::IndexMoments* out, QueryCost* cost) const override;

  [[nodiscard]] Status CheckValue(const ArrayFile& array, uint64_t index, const Value& value) const override;
  bool GathersChunks() const override { return false; }
  [[nodiscard]] Status Update(DType dtype, const LogRecord& r) override;
  [[nodiscard]] Status MarkUpdating(bool durable) override { return file_->MarkUpdating(durable); }
  void Seal() override { file_->Seal(); }
  [[nodiscard]] Status MarkClean(uint64_t sequence, const ArrayIdentity& identity, bool durable) override {
    return file_->MarkClean(sequence, identity, durable);
  }

  std::string ReplayableFor(uint64_t sequence) const override;
  void Touched(DType dtype, const LogRecord& r) override;
  [[nodiscard]] Status Recompute(DType dtype, const LogRecord& r, const OlaBuffer::CellReader& read) override;

  [[nodiscard]] Status Verify(ArrayFile& array, uint64_t* checked,
                              const std::function<void(std::string)>& mismatch) const override;

 private:
  std::unique_ptr<OlaFile> file_;
};

}  // namespace momenta
