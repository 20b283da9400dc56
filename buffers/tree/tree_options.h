// The plain values a buffer is built with and reports: how to shape it
// (TreeOptions), what a build did (BuildStats) and its progress callback.
// Apart from moment_tree.h and tree_build.h so the facade
// (buffered_array.h) can speak them without the tree's internals.
#pragma once

#include <cstdint>
#include <functional>

namespace momenta {

// Cells per Ola bin by default: its file is about 8/1024 bytes per cell, the
// default tree's 0.1% of an f8 array, and a query reads about 2·N·1024 cells.
inline constexpr uint64_t kDefaultOlaBin = 1024;

struct TreeOptions {
  int order = 2;            // J: index moments 0..J (0..8)
  uint64_t ram_budget = 0;  // bytes; 0 = 2^-20 of the array's bytes, at least kMinRamBudget
  bool disk_tier = true;
  uint32_t fanout = 64;
  uint64_t leaf_span = 0;  // 0 = default (tree about 0.1% of the array)
  // Buffer kind ola (buffers/ola/OLA.md, ola_file.h): an Ola buffer of this many
  // stencil nodes (index moments 0..N−1; even, 2..8) and bin kept beside the
  // tree, answering the index-moment statistics; 0: kind hbb, the tree alone.
  int ola_nodes = 0;
  uint64_t ola_bin = kDefaultOlaBin;
};
inline constexpr uint64_t kMinRamBudget = 64 << 10;
// The most stencil nodes an Ola buffer has (TreeOptions::ola_nodes): orders
// 0..7. N = 10 would serve order 9, past moments.h's kMaxMomentOrder, and its
// one-sided end weights grow faster still (buffers/ola/OLA.md).
inline constexpr int kOlaMaxNodes = 8;

// Buffer kind ola for index moments up to `order` (0..7): the Ola buffer's
// stencil nodes N = order + 1 rounded up to even, beside a tree of order 0.
// The CLI's --buffer ola and Python's buffer="ola" both go through this.
inline TreeOptions WithOlaBuffer(TreeOptions t, int order, uint64_t bin) {
  t.ola_nodes = (order + 2) / 2 * 2;
  t.order = 0;
  if (bin != 0) t.ola_bin = bin;
  return t;
}

// The RAM budget TreeOptions resolves to for an array of `array_bytes`.
uint64_t ResolveRamBudget(uint64_t requested, uint64_t array_bytes);

struct BuildStats {
  uint64_t data_bytes_read = 0;  // array bytes read (holes are not read)
  uint64_t leaves_with_data = 0;
  double seconds = 0;
};

// Called now and then with (array bytes done, array bytes in all).
using BuildProgress = std::function<void(uint64_t done, uint64_t total)>;

}  // namespace momenta
