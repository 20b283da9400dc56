// MomentTree: the hierarchy of RangeSummary nodes over one array, persisted in
// the sidecar's tree file (buffers/tree/tree_file.h) and mapped shared.
//
// The RAM tier (TreeLayout::ram_from() and up) is read through the mapping
// and stays resident; the disk tier is read on demand with batched I/O
// through io() (see range_query.h). The file starts sparse: an all-zero node
// is the summary of zeros, so the tree of a sparse array costs disk only where
// the array has data. Writes (build, updates) go through the mapping; before
// the first store into a node that may be a hole on disk its page is allocated
// (AllocateNodes), so a full disk surfaces as an error, never as SIGBUS.
//
// Not thread-safe; one writer per tree (the caller holds the array's lock).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/tree/index_set.h"
#include "buffers/tree/tree_file.h"
#include "buffers/tree/tree_layout.h"
#include "buffers/tree/tree_options.h"
#include "buffers/tree/verified_nodes.h"
#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"
#include "storage/io/mapped_file.h"

namespace momenta {

class MomentTree {
 public:
  MomentTree(const MomentTree&) = delete;
  MomentTree& operator=(const MomentTree&) = delete;
  ~MomentTree();

  // A new tree file at `path` for `array`, every node zero (the summary of
  // zeros), state kTreeBuilding: the caller fills it (BuildTree) and marks it
  // clean. The file is sparse where level-1 nodes are not yet written.
  static Result<std::unique_ptr<MomentTree>> Create(const std::string& path, ArrayFile& array,
                                                    const TreeOptions& options, const IoOptions& io);
  // Maps an existing tree file, format 4. NotSupported for another format
  // version (version 1: "format version 1 (before NaN counts and node
  // checks)"; 2 and 3: "(before exact integer sums of squares): run `momenta
  // build` to rebuild it"), so the caller rebuilds it; Corruption, naming the field, when the header
  // fails its check (params_crc; clean_crc when the state is clean) or a
  // field is impossible (parameters, layout, state, an odd write_epoch in a
  // clean header, padding), or the file's size does not match its parameters.
  static Result<std::unique_ptr<MomentTree>> Open(const std::string& path, bool writable, const IoOptions& io);

  const std::string& path() const { return file_->path(); }
  const TreeLayout& layout() const { return layout_; }
  const NodeCodec& codec() const { return codec_; }
  TreeFileHeader& header() { return *reinterpret_cast<TreeFileHeader*>(file_->data()); }
  const TreeFileHeader& header() const { return *reinterpret_cast<const TreeFileHeader*>(file_->data()); }
  int order() const { return codec_.order(); }

  // Byte offset of node j of `level` in the tree file, and its stored doubles.
  // REQUIRES: 1 <= level <= layout().levels(), j < layout().nodes(level)
  uint64_t NodeOffset(int level, uint64_t j) const {
    return kTreeHeaderBytes + (layout_.node_base(level) + j) * codec_.bytes();
  }
  // Whether every page of nodes [first, first + count) of `level` is in the
  // page cache (one mincore, no device round; false when the kernel would
  // not say). Reading them through the mapping then faults nothing from disk.
  bool NodesCached(int level, uint64_t first, uint64_t count) const {
    return file_->AllPagesCached(NodeOffset(level, first), count * codec_.bytes());
  }
  // The node's place in the node array: what its check binds (NodeCodec).
  uint64_t Slot(int level, uint64_t j) const { return layout_.node_base(level) + j; }
  double* Node(int level, uint64_t j) { return reinterpret_cast<double*>(file_->data() + NodeOffset(level, j)); }
  const double* Node(int level, uint64_t j) const {
    return reinterpret_cast<const double*>(file_->data() + NodeOffset(level, j));
  }
  // Asks the CPU to bring node j of `level` into its cache (a hint: an
  // update loop issues it a few updates ahead, so the node's cache and TLB
  // misses overlap instead of adding up).
  void PrefetchNode(int level, uint64_t j) const {
    const char* node = file_->data() + NodeOffset(level, j);
    for (size_t at = 0; at < codec_.bytes(); at += 64) __builtin_prefetch(node + at, 1);
  }
  // The stored summary, decoded without looking at the node's check (see VerifyNode).
  RangeSummary Summary(int level, uint64_t j) const {
    return codec_.Decode(Node(level, j), layout_.node_end(level, j) - layout_.node_first(level, j));
  }

  // OK when node j of `level`, whose bytes are `node` (the mapping's, or a
  // copy read from the file), may be answered from: a written node whose
  // check matches, or a hole (all zero) that its parent (or, at the top, the
  // header's top_mask) records as never written; a hole's parent is checked
  // in turn. Else Corruption(path(), "<what>: node j of level L fails its
  // check"). `memo` (optional) remembers the last parent checked, so a run
  // of siblings costs one parent check.
  struct ParentMemo {
    int level = 0;
    uint64_t index = 0;
    uint64_t mask = 0;
  };
  [[nodiscard]] Status VerifyNode(int level, uint64_t j, const double* node, ParentMemo* memo = nullptr) const;
  // VerifyNode once per node and write_epoch: skipped when this process
  // already found the node good at `epoch` (what ReadEpoch gave before the
  // node was read), recorded when it is found good now. The guarantee that
  // leaves is in buffers/tree/verified_nodes.h. Thread-safe for readers.
  [[nodiscard]] Status VerifyNodeOnce(int level, uint64_t j, const double* node, uint64_t epoch,
                                      ParentMemo* memo = nullptr) const {
    const uint64_t slot = Slot(level, j);
    if (verified_.Has(slot, epoch)) return Status::OK();
    MOMENTA_RETURN_IF_ERROR(VerifyNode(level, j, node, memo));
    verified_.Add(slot, epoch);
    return Status::OK();
  }
  // The header's write_epoch now (the seqlock; odd while a writer changes nodes).
  uint64_t ReadEpoch() const;
  // Records that node j of `level` has been written: sets its bit in its
  // parent's children mask (the parent's check is then stale: the caller
  // reseals or re-encodes the parent) or, at the top, in the header's
  // top_mask. Allocates the parent's page first.
  [[nodiscard]] Status MarkWritten(int level, uint64_t j);
  // Recomputes clean_crc as if the state were clean (see tree_file.h).
  void SealHeader();
  // Seals the header, then sets the state to kTreeClean (a reader that sees
  // the state sees the seal).
  void MarkClean();

  // Makes nodes [first, first + count) of `level` safe to store into.
  [[nodiscard]] Status AllocateNodes(int level, uint64_t first, uint64_t count);
  // Starts reading the file pages of nodes [first, first + count) of `level`
  // that are not in `asked` (4 KiB pages of the file, added to it), so that
  // an update loop's faults on them do not read one page at a time. A hint.
  void FetchNodes(int level, uint64_t first, uint64_t count, IndexSet* asked);
  // Node reads that bypass the mapping (the disk tier's batched reads).
  IoBackend& io() { return *io_; }
  // Bytes of the tree file in each tier.
  uint64_t ram_tier_bytes() const;
  uint64_t disk_tier_bytes() const;

  // Writes every dirty page of the mapping to disk.
  [[nodiscard]] Status Flush() { return file_->FlushAll(); }
  // Seals the header (when clean) and writes its page to disk.
  [[nodiscard]] Status FlushHeader();

 private:
  MomentTree(std::unique_ptr<MappedFile> file, std::unique_ptr<IoBackend> io, TreeLayout layout, int order,
             bool bind_slot);

  std::unique_ptr<MappedFile> file_;
  std::unique_ptr<IoBackend> io_;
  const TreeLayout layout_;
  const NodeCodec codec_;
  std::vector<uint64_t> allocated_pages_;  // bit k: node page k is known to be allocated
  mutable VerifiedNodes verified_;         // nodes found good at an epoch (VerifyNodeOnce)
};

// The layout parameters a header records.
TreeLayout LayoutOf(const TreeFileHeader& h);

}  // namespace momenta
