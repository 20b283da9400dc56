// The parts behind BufferedArray, for the library's own tests and benchmarks
// and for the progressive sums (which walk the tree's nodes): not installed,
// and not for front ends, which ask the facade (Stat, StatBatch, leaf_span).
#pragma once

#include <cstdint>
#include <memory>

#include "buffers/buffered_array.h"
#include "buffers/ola/ola_file.h"
#include "buffers/ola/ola_progressive.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/progressive_sum.h"

namespace momenta {

struct BufferedArrayParts {
  static MomentTree& Tree(BufferedArray& ba);
  static const OlaFile* Ola(const BufferedArray& ba);
};

// The buffer's moment tree (buffers/tree/moment_tree.h).
inline MomentTree& TreeOf(BufferedArray& ba) { return BufferedArrayParts::Tree(ba); }
// The Ola buffer beside the tree (kind ola, TreeOptions::ola_nodes > 0);
// nullptr for kind hbb.
inline const OlaFile* OlaOf(const BufferedArray& ba) { return BufferedArrayParts::Ola(ba); }

// The progressive sum of [p, q) (ola_progressive.h): through the levels of the
// Ola buffer where the kind keeps one, else the tree's partial leaves. Made
// anew after a rebuild (it holds the buffer's parts of the moment).
std::unique_ptr<OlaProgressiveSum> ProgressiveSumOf(BufferedArray& ba, uint64_t p, uint64_t q);
// The tree's pieces of [p, q) (progressive_sum.h; every kind keeps a tree with
// value moments and extremes): what the bounds of Σa² are taken from.
std::unique_ptr<ProgressiveSum> TreePiecesOf(BufferedArray& ba, uint64_t p, uint64_t q);

}  // namespace momenta
