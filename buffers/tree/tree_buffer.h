// TreeBuffer: kind hbb's MomentBuffer (moment_buffer.h) — the moment tree
// alone, whose summaries carry index moments of its order J. Nothing besides
// the tree to answer from, update, seal, clean or verify.
#pragma once

#include <string>

#include "buffers/tree/moment_buffer.h"

namespace momenta {

class TreeBuffer final : public MomentBuffer {
 public:
  // `ola_path`: where an Ola buffer would be (named by the error of an index
  // query that finds the tree's header asking for one).
  explicit TreeBuffer(std::string ola_path) : ola_path_(std::move(ola_path)) {}

  int index_order(const MomentTree& tree) const override { return tree.order(); }
  bool KeepsIndexMoments() const override { return false; }
  const OlaFile* ola_file() const override { return nullptr; }
  bool NamesFile(const std::string&) const override { return false; }
  void Describe(BufferDescription*) const override {}

  [[nodiscard]] Status AddIndexMoments(const QueryIo&, ArrayFile&, std::span<const IndexRange>,
                                       std::vector<RangeSummary>*, std::vector<QueryCost>*, QueryCost*) const override {
    return Status::OK();
  }
  [[nodiscard]] Status CheckIndexAlone(const MomentTree& tree, const ArrayFile& array) const override;
  [[nodiscard]] Status IndexMoments(const QueryIo&, ArrayFile&, uint64_t, uint64_t, momenta::IndexMoments*,
                                    QueryCost*) const override;

  [[nodiscard]] Status CheckValue(const ArrayFile&, uint64_t, const Value&) const override { return Status::OK(); }
  bool GathersChunks() const override { return true; }
  [[nodiscard]] Status Update(DType, const LogRecord&) override { return Status::OK(); }
  [[nodiscard]] Status MarkUpdating(bool) override { return Status::OK(); }
  void Seal() override {}
  [[nodiscard]] Status MarkClean(uint64_t, const ArrayIdentity&, bool) override { return Status::OK(); }

  std::string ReplayableFor(uint64_t) const override { return ""; }
  void Touched(DType, const LogRecord&) override {}
  [[nodiscard]] Status Recompute(DType, const LogRecord&, const CellReader&) override { return Status::OK(); }

  [[nodiscard]] Status Verify(ArrayFile&, uint64_t*, const std::function<void(std::string)>&) const override {
    return Status::OK();
  }

 private:
  const std::string ola_path_;
};

}  // namespace momenta
