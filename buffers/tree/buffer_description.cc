#include "buffers/tree/buffer_description.h"

#include "buffers/tree/moment_tree.h"

namespace momenta {

BufferDescription DescribeTree(const MomentTree& tree) {
  BufferDescription d;
  const TreeFileHeader& h = tree.header();
  const TreeLayout& l = tree.layout();
  d.kind = h.ola_nodes > 0 ? "ola" : "hbb";
  d.order = tree.order();
  d.fanout = l.fanout();
  d.leaf_span = l.leaf_span();
  d.ram_from_level = l.ram_from();
  d.ram_budget = h.ram_budget;
  d.ram_tier_bytes = tree.ram_tier_bytes();
  d.disk_tier_bytes = tree.disk_tier_bytes();
  d.updates_since_build = h.updates_since_build;
  for (int k = 1; k <= l.levels(); ++k)
    d.levels.push_back({l.nodes(k), l.span(k), l.nodes(k) * tree.codec().bytes(), l.in_ram(k)});
  return d;
}

}  // namespace momenta
