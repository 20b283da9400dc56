// TreeLayout: the index math of the moment hierarchy, pure (no I/O, no data).
//
// Level 0 is the array itself. Level 1 has one node per leaf of `leaf_span`
// elements; level k+1 has one node per `fanout` nodes of level k. Node j of
// level k covers elements [j * span_k, min((j + 1) * span_k, length)): the last
// node of a level may be short. The top level is the first with <= fanout
// nodes. An empty array (length 0) has no levels and no nodes; its leaf_span
// is still resolved (never 0), so index math on it never divides by zero. Levels are numbered 1..levels(); all nodes of
// all levels sit in one flat node array, level 1 first (node_base(k) gives a level's first slot).
//
// Tiers: the top levels whose nodes together fit the RAM budget form the RAM
// tier (levels ram_from()..levels()); the levels below are the disk tier, read
// on demand. With the disk tier off, leaf_span is chosen so that every level
// fits the budget (the paper's pure in-RAM scheme: buffers/REFERENCE.md §3.6).
#pragma once

#include <cstdint>
#include <vector>

namespace momenta {

struct TreeLayoutParams {
  uint64_t length = 0;             // elements in the array
  uint64_t node_bytes = 64;        // bytes one node takes
  uint64_t ram_budget = 64 << 10;  // bytes the RAM tier may take
  uint32_t fanout = 64;            // children per node above level 1
  bool disk_tier = true;
  // With the disk tier: elements per leaf (0 = the default: the power of two
  // nearest to making the whole tree 0.1% of the array's bytes, at least 1024).
  uint64_t leaf_span = 0;
  uint64_t itemsize = 8;  // bytes per element (for the 0.1% default)
};

class TreeLayout {
 public:
  TreeLayout() = default;
  explicit TreeLayout(const TreeLayoutParams& params);

  uint64_t length() const { return length_; }
  uint32_t fanout() const { return fanout_; }
  uint64_t leaf_span() const { return leaf_span_; }                   // >= 1, also when length == 0
  int levels() const { return static_cast<int>(nodes_.size()) - 1; }  // 0 when length == 0
  // REQUIRES of all: 1 <= level <= levels()
  uint64_t span(int level) const { return span_[level]; }
  uint64_t nodes(int level) const { return nodes_[level]; }
  uint64_t node_base(int level) const { return base_[level]; }
  uint64_t total_nodes() const { return base_.back(); }
  // Lowest level of the RAM tier; levels() + 1 when nothing fits the budget,
  // 1 when everything does (e.g. the disk tier is off).
  int ram_from() const { return ram_from_; }
  uint64_t ram_nodes() const;  // nodes of levels ram_from()..levels()
  bool in_ram(int level) const { return level >= ram_from_; }

  // Elements [first, end) covered by node j of `level`.
  uint64_t node_first(int level, uint64_t j) const { return j * span_[level]; }
  uint64_t node_end(int level, uint64_t j) const;

  // The decomposition of [p, q) into the fewest pieces: raw elements at the
  // two ends, then at each level a run of whole nodes on each side (at most
  // fanout - 1 nodes, or any number on the top level), left to right:
  //   raw_left, level 1 left run, level 2 left run, ..., top run, ...,
  //   level 2 right run, level 1 right run, raw_right.
  struct NodeRun {
    int level = 0;
    uint64_t first = 0;  // node index within the level
    uint64_t count = 0;
  };
  struct Plan {
    uint64_t raw_left_begin = 0, raw_left_end = 0;  // elements read from the array
    uint64_t raw_right_begin = 0, raw_right_end = 0;
    std::vector<NodeRun> runs;  // non-empty runs, left to right
  };
  // REQUIRES: p <= q <= length()
  Plan Decompose(uint64_t p, uint64_t q) const;

  // Node index (within `level`) covering element i. REQUIRES: i < length()
  uint64_t NodeOf(int level, uint64_t i) const { return i / span_[level]; }

 private:
  uint64_t length_ = 0;
  uint32_t fanout_ = 0;
  int ram_from_ = 1;
  uint64_t leaf_span_ = 1;            // elements per leaf; >= 1
  std::vector<uint64_t> span_{1};     // [0] = 1 (elements), [k] = span of level k
  std::vector<uint64_t> nodes_{0};    // [k] = nodes of level k; [0] unused
  std::vector<uint64_t> base_{0, 0};  // [k] = first slot of level k; back() = total
};

}  // namespace momenta
