#include "buffers/tree/tree_layout.h"

#include <algorithm>
#include <cassert>

namespace momenta {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t PowerOfTwoAtLeast(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// Node counts of every level for a given leaf span (index 0 unused).
std::vector<uint64_t> LevelNodes(uint64_t length, uint64_t leaf_span, uint32_t fanout) {
  std::vector<uint64_t> nodes{0};
  uint64_t n = CeilDiv(length, leaf_span);
  while (true) {
    nodes.push_back(n);
    if (n <= fanout) break;
    n = CeilDiv(n, fanout);
  }
  return nodes;
}

uint64_t SumNodes(const std::vector<uint64_t>& nodes, size_t from) {
  uint64_t s = 0;
  for (size_t k = from; k < nodes.size(); ++k) s += nodes[k];
  return s;
}

}  // namespace

TreeLayout::TreeLayout(const TreeLayoutParams& p) : length_(p.length), fanout_(p.fanout) {
  assert(p.fanout >= 2 && p.node_bytes > 0);
  const uint64_t budget_nodes = std::max<uint64_t>(1, p.ram_budget / p.node_bytes);
  uint64_t leaf = p.leaf_span;
  if (!p.disk_tier) {
    // The smallest power-of-two leaf whose whole tree fits the budget.
    leaf = 1;
    while (leaf < length_ && SumNodes(LevelNodes(length_, leaf, fanout_), 1) > budget_nodes) leaf <<= 1;
  } else if (leaf == 0) {
    // Tree bytes ~ node_bytes * length / leaf * (1 + 1/fanout) ~ 0.1% of length * itemsize.
    // The nearest power of two (16384 for f8 at J = 2, nodes of 192 bytes).
    const uint64_t target = CeilDiv(1000 * p.node_bytes, p.itemsize);
    const uint64_t above = PowerOfTwoAtLeast(target);
    leaf = std::max<uint64_t>(1024, above - target <= target - above / 2 ? above : above / 2);
  }
  assert(leaf >= 1);
  leaf_span_ = leaf;
  if (length_ == 0) return;  // no levels: the members keep their empty defaults
  nodes_ = LevelNodes(length_, leaf, fanout_);
  span_.assign(nodes_.size(), 1);
  span_[1] = leaf;
  for (size_t k = 2; k < span_.size(); ++k) span_[k] = span_[k - 1] * fanout_;
  base_.assign(nodes_.size() + 1, 0);  // [k] = first slot of level k; back() = total
  for (size_t k = 1; k < nodes_.size(); ++k) base_[k + 1] = base_[k] + nodes_[k];
  ram_from_ = levels() + 1;
  uint64_t used = 0;
  for (int k = levels(); k >= 1; --k) {
    if (used + nodes_[k] > budget_nodes) break;
    used += nodes_[k];
    ram_from_ = k;
  }
}

uint64_t TreeLayout::ram_nodes() const {
  uint64_t s = 0;
  for (int k = ram_from_; k <= levels(); ++k) s += nodes_[k];
  return s;
}

uint64_t TreeLayout::node_end(int level, uint64_t j) const { return std::min((j + 1) * span_[level], length_); }

TreeLayout::Plan TreeLayout::Decompose(uint64_t p, uint64_t q) const {
  assert(p <= q && q <= length_);
  Plan plan;
  if (p == q) return plan;
  // Boundaries of the whole nodes of a level: [up(p), down(q)), where the last
  // (possibly short) node counts as whole when q reaches the array's end.
  auto up = [&](uint64_t x, uint64_t s) { return std::min(CeilDiv(x, s) * s, length_); };
  auto down = [&](uint64_t x, uint64_t s) { return x == length_ ? x : x / s * s; };
  uint64_t a = up(p, span_[1]), b = down(q, span_[1]);
  if (a >= b) {  // no whole leaf: the range lies within at most two leaves
    plan.raw_left_begin = p;
    plan.raw_left_end = q;
    plan.raw_right_begin = plan.raw_right_end = q;
    return plan;
  }
  plan.raw_left_begin = p;
  plan.raw_left_end = a;
  plan.raw_right_begin = b;
  plan.raw_right_end = q;
  std::vector<NodeRun> right;
  for (int k = 1; k <= levels(); ++k) {
    const uint64_t s = span_[k];
    uint64_t na = 0, nb = 0;  // whole nodes of the next level
    bool next = k < levels();
    if (next) {
      na = up(a, span_[k + 1]);
      nb = down(b, span_[k + 1]);
      next = na < nb;
    }
    if (!next) {  // everything left in [a, b) at this level
      plan.runs.push_back({k, a / s, CeilDiv(b, s) - a / s});
      break;
    }
    if (na > a) plan.runs.push_back({k, a / s, (na - a) / s});
    if (b > nb) right.push_back({k, nb / s, CeilDiv(b, s) - nb / s});
    a = na;
    b = nb;
  }
  plan.runs.insert(plan.runs.end(), right.rbegin(), right.rend());
  return plan;
}

}  // namespace momenta
