// TreeMaintenance: keeps a MomentTree equal to its array while elements
// change, one change at a time, in runs (a chunk of updates, or a replay of
// the log) that end with Flush.
//
// A chunk's changes (ApplyGathered) update each node over them once, from
// their deltas summed first (node_delta.h); one change (Apply) updates one
// node per level in place
// (NodeCodec::ApplyUpdate; for the index moments about the node's start s,
// with r = k - s and Δ = new - old:  M_t += Δ · r^t,  buffers/REFERENCE.md
// §2.3). A node whose rounding drift passed kDriftLimit, or whose extreme may
// have shrunk (min/max are not invertible), is queued and recomputed from
// data at Flush: a leaf from its cells, a parent from its children, level by
// level. Node checks (CRCs) are not kept current per change: a changed node
// is listed once and resealed at Flush, so its check is stale while a run is
// open (readers take the seqlock around a run and retry; storage/ON_DISK.md).
//
// The tree is passed to every call: a rebuild replaces the caller's tree, and
// the lists start afresh for a tree of another layout. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "buffers/algebra/node_delta.h"
#include "buffers/tree/index_set.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "storage/array/array_store.h"

namespace momenta {

class TreeMaintenance {
 public:
  // REQUIRES: `array` outlives this object, and every tree passed describes it.
  explicit TreeMaintenance(ArrayFile& array) : array_(array) {}
  TreeMaintenance(const TreeMaintenance&) = delete;
  TreeMaintenance& operator=(const TreeMaintenance&) = delete;

  // Starts a run of changes to `tree`: nothing queued for recomputation.
  void Begin(const MomentTree& tree);
  // Applies a[index]: old -> new (raw element bytes) to every level of `tree`
  // (allocating node pages that are holes). REQUIRES: Begin(tree) since the
  // last rebuild; the array may already hold later values of this run.
  // `reserved`: the caller allocated every node over `index` already
  // (BufferedArray's reservation before a chunk), so no page is checked.
  [[nodiscard]] Status Apply(MomentTree& tree, uint64_t index, const char* old_bytes, const char* new_bytes,
                             bool reserved = false);
  // The change a[index]: old -> new (raw element bytes) as the tree sees it.
  CellChange ChangeOf(uint64_t index, const char* old_bytes, const char* new_bytes) const;
  // Applies a chunk's changes gathered per node: each node over them is
  // updated once (NodeCodec::ApplyDelta), a leaf from its cells' changes, a
  // parent from its children's deltas moved into its frame (node_delta.h),
  // level by level — the same bookkeeping as Apply per change (children
  // masks, checks resealed at Flush, drifted or shrunk nodes recomputed).
  // REQUIRES: Begin(tree) since the last rebuild; distinct indices; every
  // value finite; the nodes over every index allocated (reserved).
  [[nodiscard]] Status ApplyGathered(MomentTree& tree, std::span<const CellChange> changes);
  // Queues every level's node over `index` for recomputation at Flush.
  // REQUIRES: Begin(tree)
  void QueueRefresh(const MomentTree& tree, uint64_t index);
  // Leaves queued for recomputation.
  size_t leaves_queued() const { return refresh_.size() > 1 ? refresh_[1].size() : 0; }
  bool any_queued() const;
  // Reseals the nodes changed since their last check and recomputes the
  // queued ones, level by level; leaves are read through `store` when given
  // (a writer: the page cache as it is), else from the array file.
  [[nodiscard]] Status Flush(MomentTree& tree, const ArrayStore* store);

 private:
  [[nodiscard]] Status RefreshLeaf(MomentTree& tree, uint64_t leaf, const ArrayStore* store);
  void SealTouched(MomentTree& tree, int level);
  // Lists node j of `level` for resealing at Flush (once per run).
  void Touch(MomentTree& tree, int level, uint64_t j);
  void SizeTouchedForTree(const MomentTree& tree);

  ArrayFile& array_;
  std::vector<std::vector<uint64_t>> refresh_;  // per level: nodes to recompute at Flush
  // Per level: nodes changed in place since their check was last computed;
  // Flush reseals them (once per node per run, not per change).
  std::vector<std::vector<uint64_t>> touched_;
  std::vector<std::vector<uint64_t>> touched_bits_;  // per level: bit j set while node j is in touched_
  std::array<uint64_t, 4> touched_shape_{};          // levels, leaf span, fan-out, length they are sized for
  const MomentTree* touched_tree_ = nullptr;         // the tree SizeTouchedForTree last looked at
  // ApplyGathered's scratch, per level in turn: the nodes changed, their
  // deltas (same positions), and node -> position.
  std::vector<uint64_t> group_nodes_, next_nodes_;
  std::vector<NodeDelta> group_deltas_, next_deltas_;
  IndexMap group_of_;
  std::vector<char> leaf_scratch_;
  std::vector<double> leaf_doubles_;
};

}  // namespace momenta
