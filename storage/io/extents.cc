#include "storage/io/extents.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "storage/io/posix_file.h"

namespace momenta {

Result<std::vector<ByteRange>> DataExtents(const std::string& path, uint64_t begin, uint64_t end) {
  if (begin >= end) return std::vector<ByteRange>{};
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  return DataExtentsOf(fd->get(), path, begin, end);
}

Result<std::vector<ByteRange>> DataExtentsOf(int fd, const std::string& path, uint64_t begin, uint64_t end) {
  std::vector<ByteRange> out;
  uint64_t at = begin;
  while (at < end) {
    off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;                     // no data after `at`
      if (errno == EINVAL || errno == EOPNOTSUPP) {  // no SEEK_DATA here: all data
        out.push_back({at, end});
        break;
      }
      return Status::FromErrno(path, errno);
    }
    if (static_cast<uint64_t>(data) >= end) break;
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return Status::FromErrno(path, errno);
    const uint64_t stop = std::min<uint64_t>(static_cast<uint64_t>(hole), end);
    if (!out.empty() && out.back().end == static_cast<uint64_t>(data)) {
      out.back().end = stop;
    } else {
      out.push_back({static_cast<uint64_t>(data), stop});
    }
    at = stop;
  }
  return out;
}

}  // namespace momenta
