#include "buffers/tree/tree_maintenance.h"

#include <algorithm>

#include "buffers/tree/tree_build.h"  // RecomputeFromChildren

namespace momenta {
namespace {

// Changed nodes remembered per level before they are resealed early.
constexpr size_t kMaxTouched = size_t{1} << 16;

// new − old and new² − old², exactly, for integer dtypes (the nodes' exact
// sums and sums of squares); 0 otherwise.
ExactChange ExactDelta(DType t, const char* old_bytes, const char* new_bytes) {
  if (!DTypeIsInteger(t)) return {};
  const Value o = DecodeValue(t, old_bytes), n = DecodeValue(t, new_bytes);
  auto wide = [](const Value& v) -> Int128 {
    return v.kind == Value::Kind::kUInt ? static_cast<Int128>(v.u) : static_cast<Int128>(v.i);
  };
  return ExactChangeOf(wide(o), wide(n));
}

}  // namespace

void TreeMaintenance::Begin(const MomentTree& tree) {
  refresh_.assign(tree.layout().levels() + 1, {});
  SizeTouchedForTree(tree);  // a rebuild may have changed the layout since the last run
}

bool TreeMaintenance::any_queued() const {
  return std::any_of(refresh_.begin(), refresh_.end(), [](const auto& level) { return !level.empty(); });
}

Status TreeMaintenance::Apply(MomentTree& tree, uint64_t index, const char* old_bytes, const char* new_bytes,
                              bool reserved) {
  const DType t = array_.dtype();
  const double old_value = DecodeDouble(t, old_bytes);
  const double new_value = DecodeDouble(t, new_bytes);
  const ExactChange exact_delta = ExactDelta(t, old_bytes, new_bytes);
  const TreeLayout& layout = tree.layout();
  const NodeCodec& codec = tree.codec();
  if (touched_tree_ != &tree) SizeTouchedForTree(tree);  // (runs check the layout itself)
  // Checks: a node changed here is listed once (a bit per node) and
  // resealed once at the run's end (Flush), not per update: a check costs a
  // CRC of the node, an update a few dozen multiply-adds. The trade-off
  // (storage/ON_DISK.md): checks are stale while a chunk runs (readers retry
  // on the epoch anyway); measured, listing and sealing add 3.8% to a warm
  // hot-range update (instructions). A node written for the first time (it
  // was a hole) is recorded in its parent's children mask, which this update
  // changes next (or in the header's top_mask), so a node zeroed later by
  // damage is not taken for a hole.
  int64_t new_child = -1;  // the node below was a hole: its bit in this level's node
  for (int level = 1; level <= layout.levels(); ++level) {
    const uint64_t j = layout.NodeOf(level, index);
    const uint64_t first = layout.node_first(level, j);
    const uint64_t count = layout.node_end(level, j) - first;
    if (!reserved) MOMENTA_RETURN_IF_ERROR(tree.AllocateNodes(level, j, 1));
    double* node = tree.Node(level, j);
    if (new_child >= 0) codec.SetChild(node, static_cast<uint32_t>(new_child));
    const bool was_hole = codec.Check(node) == 0;  // (or changed since, in this run)
    // M_t += Δ · r^t, r = index - first (and the value moments, extremes, counts).
    const NodeCodec::UpdateOutcome outcome =
        codec.ApplyUpdate(node, count, index - first, old_value, new_value, exact_delta);
    new_child = was_hole ? static_cast<int64_t>(j % layout.fanout()) : -1;
    if (was_hole && level == layout.levels()) MOMENTA_RETURN_IF_ERROR(tree.MarkWritten(level, j));
    Touch(tree, level, j);
    // Drift past the limit, or an extreme that may have shrunk: recompute the
    // node from data when the run ends (the array may already hold later
    // values of this run that the tree has not seen yet).
    if (outcome.drifted || outcome.extremes_may_shrink) refresh_[level].push_back(j);
  }
  return Status::OK();
}

void TreeMaintenance::Touch(MomentTree& tree, int level, uint64_t j) {
  uint64_t& word = touched_bits_[level][j / 64];
  if ((word >> (j % 64)) & 1) return;  // listed once per run
  word |= uint64_t{1} << (j % 64);
  touched_[level].push_back(j);
  if (touched_[level].size() >= kMaxTouched) SealTouched(tree, level);  // a long replay: bound the list
}

CellChange TreeMaintenance::ChangeOf(uint64_t index, const char* old_bytes, const char* new_bytes) const {
  const DType t = array_.dtype();
  return CellChange{index, DecodeDouble(t, old_bytes), DecodeDouble(t, new_bytes), ExactDelta(t, old_bytes, new_bytes)};
}

Status TreeMaintenance::ApplyGathered(MomentTree& tree, std::span<const CellChange> changes) {
  const TreeLayout& layout = tree.layout();
  const NodeCodec& codec = tree.codec();
  const int order = tree.order();
  if (touched_tree_ != &tree) SizeTouchedForTree(tree);
  // Level 1: each leaf's delta from its cells, about the leaf's own shift K.
  group_nodes_.clear();
  group_deltas_.clear();
  group_of_.clear();
  for (const CellChange& c : changes) {
    const uint64_t leaf = layout.NodeOf(1, c.index);
    const uint32_t at = group_of_.FindOrInsert(leaf, static_cast<uint32_t>(group_nodes_.size()));
    if (at == group_nodes_.size()) {
      group_nodes_.push_back(leaf);
      group_deltas_.emplace_back(codec.Shift(tree.Node(1, leaf)));
    }
    group_deltas_[at].Add(order, c.index - layout.node_first(1, leaf), c);
  }
  for (int level = 1;; ++level) {
    const bool top = level == layout.levels();
    next_nodes_.clear();
    next_deltas_.clear();
    group_of_.clear();
    for (size_t k = 0; k < group_nodes_.size(); ++k) {
      const uint64_t j = group_nodes_[k];
      const NodeDelta& d = group_deltas_[k];
      const uint64_t first = layout.node_first(level, j);
      double* node = tree.Node(level, j);
      for (uint64_t mask = d.new_children; mask != 0; mask &= mask - 1)
        codec.SetChild(node, static_cast<uint32_t>(__builtin_ctzll(mask)));
      const bool was_hole = codec.Check(node) == 0;  // (or changed since, in this run)
      const NodeCodec::UpdateOutcome outcome = codec.ApplyDelta(node, layout.node_end(level, j) - first, d);
      if (was_hole && top) MOMENTA_RETURN_IF_ERROR(tree.MarkWritten(level, j));
      Touch(tree, level, j);
      if (outcome.drifted || outcome.extremes_may_shrink) refresh_[level].push_back(j);
      if (top) continue;
      // Into the parent's delta, moved to its start and its shift.
      const uint64_t parent = j / layout.fanout();
      const uint32_t at = group_of_.FindOrInsert(parent, static_cast<uint32_t>(next_nodes_.size()));
      if (at == next_nodes_.size()) {
        next_nodes_.push_back(parent);
        next_deltas_.emplace_back(codec.Shift(tree.Node(level + 1, parent)));
      }
      next_deltas_[at].AddChild(order, first - layout.node_first(level + 1, parent), d);
      if (was_hole) next_deltas_[at].new_children |= uint64_t{1} << (j % layout.fanout());
    }
    if (top) return Status::OK();
    group_nodes_.swap(next_nodes_);
    group_deltas_.swap(next_deltas_);
  }
}

void TreeMaintenance::QueueRefresh(const MomentTree& tree, uint64_t index) {
  const TreeLayout& layout = tree.layout();
  for (int level = 1; level <= layout.levels(); ++level) refresh_[level].push_back(layout.NodeOf(level, index));
}

Status TreeMaintenance::Flush(MomentTree& tree, const ArrayStore* store) {
  SizeTouchedForTree(tree);
  const TreeLayout& layout = tree.layout();
  const int levels = static_cast<int>(std::max(refresh_.size(), touched_.size())) - 1;
  auto sorted = [](std::vector<uint64_t>& nodes) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  };
  // Level by level: a level's changed nodes are resealed before its
  // recomputed ones are merged from the level below, whose checks say which
  // children were written.
  for (int level = 1; level <= levels; ++level) {
    if (level < static_cast<int>(touched_.size())) SealTouched(tree, level);
    if (level >= static_cast<int>(refresh_.size())) continue;
    std::vector<uint64_t>& nodes = refresh_[level];
    sorted(nodes);
    for (uint64_t j : nodes) {
      MOMENTA_RETURN_IF_ERROR(level == 1 ? RefreshLeaf(tree, j, store) : RecomputeFromChildren(tree, level, j));
      if (level < layout.levels()) refresh_[level + 1].push_back(j / layout.fanout());
    }
    nodes.clear();
  }
  return Status::OK();
}

Status TreeMaintenance::RefreshLeaf(MomentTree& tree, uint64_t leaf, const ArrayStore* store) {
  const TreeLayout& layout = tree.layout();
  const uint64_t first = layout.node_first(1, leaf);
  const uint64_t n = layout.node_end(1, leaf) - first;
  leaf_scratch_.resize(n * array_.itemsize());
  leaf_doubles_.resize(n);
  // A writer reads through its mapping: the page cache as it is. (The I/O
  // backend may read with O_DIRECT, which first writes the leaf's dirty pages
  // back and waits, and leaves them clean for the next store to fault on.)
  if (store) {
    MOMENTA_RETURN_IF_ERROR(store->LoadRange(first, n, leaf_scratch_.data()));
  } else {
    MOMENTA_RETURN_IF_ERROR(array_.ReadRaw(first, n, leaf_scratch_.data()));
  }
  const RangeSummary fresh =
      RangeSummary::OfElements(tree.order(), array_.dtype(), leaf_scratch_.data(), n, leaf_doubles_.data());
  tree.codec().Encode(fresh, tree.Slot(1, leaf), tree.Node(1, leaf));
  // A parent's mask is recomputed with the parent (Flush queues it); the top
  // level's is the header's.
  if (layout.levels() == 1) return tree.MarkWritten(1, leaf);
  return Status::OK();
}

void TreeMaintenance::SizeTouchedForTree(const MomentTree& tree) {
  // Sized for the tree's layout; a rebuild may change it: start afresh (what
  // was listed belonged to the old file).
  const TreeLayout& layout = tree.layout();
  const std::array<uint64_t, 4> shape = {static_cast<uint64_t>(layout.levels()), layout.leaf_span(), layout.fanout(),
                                         layout.length()};
  touched_tree_ = &tree;
  if (shape == touched_shape_) return;
  touched_shape_ = shape;
  touched_.assign(layout.levels() + 1, {});
  touched_bits_.assign(layout.levels() + 1, {});
  for (int level = 1; level <= layout.levels(); ++level) touched_bits_[level].assign(layout.nodes(level) / 64 + 1, 0);
}

void TreeMaintenance::SealTouched(MomentTree& tree, int level) {
  std::vector<uint64_t>& nodes = touched_[level];
  for (uint64_t j : nodes) {
    tree.codec().Seal(tree.Slot(level, j), tree.Node(level, j));
    touched_bits_[level][j / 64] &= ~(uint64_t{1} << (j % 64));
  }
  nodes.clear();
}

}  // namespace momenta
