// Where a (sparse) file has data: lseek SEEK_DATA / SEEK_HOLE. Holes read as
// zeros, so a scan may skip them; a 1 TiB array with a few GiB written is
// then scanned in the time of its data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/util/status.h"

namespace momenta {

struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// The parts of [begin, end) of `path` that may hold data, in order, merged.
// File systems without SEEK_DATA report the whole range as data.
Result<std::vector<ByteRange>> DataExtents(const std::string& path, uint64_t begin, uint64_t end);
// The same over an open descriptor `fd` of `path` (named in errors): no open
// and close per call, for callers that ask per batch of updates.
Result<std::vector<ByteRange>> DataExtentsOf(int fd, const std::string& path, uint64_t begin, uint64_t end);

}  // namespace momenta
