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

// Whether the array file still holds the bytes the buffer describes: the same
// file (device, inode) with the same size and modification time. The change
// time is not compared: chmod, chown and new hard links move it without
// touching a byte. (A program that writes the file and then sets its
// modification time back goes unseen: run `momenta build` after one.)
inline bool SameContents(const ArrayIdentity& recorded, const ArrayIdentity& now) {
  return recorded.device == now.device && recorded.inode == now.inode && recorded.size == now.size &&
         recorded.mtime_ns == now.mtime_ns;
}

namespace internal {

// Creates a tree file at `path` for `array`, fills it from the array and
// marks it clean with the array's current identity and `log_sequence`.
Result<std::unique_ptr<MomentTree>> BuildTreeFile(const std::string& path, ArrayFile& array,
                                                  const TreeOptions& options, const IoOptions& io,
                                                  const BuildProgress& progress, BuildStats* stats,
                                                  uint64_t log_sequence = 0);

}  // namespace internal
}  // namespace momenta
