// Pieces shared by buffered_array.cc and buffer_open.cc; not part of the API.
#pragma once

#include <memory>
#include <string>

#include "buffers/moment_tree.h"
#include "buffers/tree_build.h"
#include "storage/array_file.h"

namespace momenta {

// The tree options recorded in a header (to rebuild with the same ones).
TreeOptions OptionsOfHeader(const TreeFileHeader& h);

namespace internal {

// Creates a tree file at `path` for `array`, fills it from the array and
// marks it clean with the array's current identity and `log_sequence`.
Result<std::unique_ptr<MomentTree>> BuildTreeFile(const std::string& path, ArrayFile& array,
                                                  const TreeOptions& options, const IoOptions& io,
                                                  const BuildProgress& progress, BuildStats* stats,
                                                  uint64_t log_sequence = 0);

}  // namespace internal
}  // namespace momenta
