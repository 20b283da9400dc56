// Building a MomentTree from its array: one sequential streaming pass over the
// array's data (holes of sparse files skipped with SEEK_DATA/SEEK_HOLE: they
// are zeros, whose summary is the all-zero node the new tree already holds),
// one stream of large reads kept in flight on a thread of its own (it never
// drains between chunks) while both cores summarize the chunks that landed,
// then the upper levels merged from their children.
#pragma once

#include <cstdint>

#include "buffers/tree/moment_tree.h"
#include "buffers/tree/tree_options.h"
#include "storage/array/array_file.h"

namespace momenta {

// Fills every node of `tree` (fresh from MomentTree::Create: all zero) from
// `array`. Leaves the header's state and identity to the caller.
Result<BuildStats> BuildTree(ArrayFile& array, MomentTree& tree, const BuildProgress& progress = {});

// Recomputes node j of `level` >= 2 from its children, its children mask from
// their checks (a node with no written child that is a hole stays one; the
// top level sets the header's top_mask) (used by the build and
// when an update may have shrunk an extreme). Fails only when the node's page
// cannot be allocated (disk full).
[[nodiscard]] Status RecomputeFromChildren(MomentTree& tree, int level, uint64_t j);

}  // namespace momenta
