// The largest file a file system holds, for the message of a create that
// asked for more ("File too large" alone does not say what would fit).
#pragma once

#include <cstdint>
#include <string>

#include "storage/util/status.h"

namespace momenta {

// The largest size the open, writable regular file `fd` may be given on its
// file system: found by ftruncate on that very file (a binary search between
// `fits`, a size known to be accepted, and `refused`, one that was refused
// with EFBIG; sparse, so each step is instant). The file is left at some size
// <= the limit: call it on a file that is about to be removed.
// REQUIRES: fits < refused
uint64_t ProbeFileSizeLimit(int fd, uint64_t fits, uint64_t refused);

// The name of the file system that holds `fd` ("ext2/3/4", "xfs", "btrfs",
// "tmpfs", ...), or "" when statfs does not say one momenta knows.
std::string FileSystemName(int fd);

// "IO error: <path>: File too large: <what> needs N bytes (8.0 PiB); the
// largest file this file system (ext2/3/4) holds is M bytes (16.0 TiB)",
// the limit probed on `fd` as ProbeFileSizeLimit does (`fits` bytes were
// accepted, `need` refused with EFBIG).
Status FileTooLarge(int fd, const std::string& path, const std::string& what, uint64_t fits, uint64_t need);

}  // namespace momenta
