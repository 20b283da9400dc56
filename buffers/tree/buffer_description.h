// BufferDescription: what an array's moment buffer is, read as it is — the
// tree's layout and tiers, and what its kind keeps beside it — for the
// facade's Describe (buffers/buffered_array.h) and `momenta info`. Plain
// values: whoever prints them reaches none of the buffer's parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace momenta {

class MomentTree;  // moment_tree.h

struct BufferDescription {
  // ---- the tree (every kind keeps one) ----
  std::string kind;  // "hbb", or "ola" when the tree's header names an Ola buffer beside it
  int order = 0;     // the tree's J: its nodes' index moments are of orders 0..J
  uint32_t fanout = 0;
  uint64_t leaf_span = 0;
  int ram_from_level = 0;
  uint64_t ram_budget = 0;
  uint64_t ram_tier_bytes = 0;
  uint64_t disk_tier_bytes = 0;
  uint64_t updates_since_build = 0;
  struct Level {
    uint64_t nodes = 0;
    uint64_t span = 0;   // elements one node covers
    uint64_t bytes = 0;  // the level's nodes
    bool in_ram = false;
  };
  std::vector<Level> levels;  // levels[k - 1] is level k (1: the leaves)

  // ---- kind ola: the Ola buffer's file, when it was read ----
  struct Ola {
    int nodes = 0;  // its stencils' nodes N: index orders 0..N − 1
    int max_order = 0;
    uint64_t bin = 0;
    int levels = 0;
    uint64_t slots = 0;
    uint64_t file_bytes = 0;
    double growth = 0;
  };
  std::optional<Ola> ola;  // empty for kind ola: missing or unreadable (the next command rebuilds it)
};

// The tree's part of the description (the Ola part is its MomentBuffer's:
// moment_buffer.h, Describe).
BufferDescription DescribeTree(const MomentTree& tree);

}  // namespace momenta
