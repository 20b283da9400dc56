#include "storage/io/file_size_limit.h"

#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "storage/util/format_bytes.h"

namespace momenta {

uint64_t ProbeFileSizeLimit(int fd, uint64_t fits, uint64_t refused) {
  // Invariant: a size of `fits` bytes is accepted, `refused` is not.
  while (refused - fits > 1) {
    const uint64_t mid = fits + (refused - fits) / 2;
    int rc;
    do rc = ::ftruncate(fd, static_cast<off_t>(mid));
    while (rc != 0 && errno == EINTR);
    if (rc == 0)
      fits = mid;
    else
      refused = mid;
  }
  return fits;
}

std::string FileSystemName(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return "";
  switch (static_cast<uint64_t>(fs.f_type)) {
    case 0xEF53:
      return "ext2/3/4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0x2FC12FC1:
      return "zfs";
    case 0xF2F52010:
      return "f2fs";
    case 0x4D44:
      return "FAT";
    case 0x5346544E:
      return "NTFS";
    case 0x6969:
      return "NFS";
    case 0x794C7630:
      return "overlayfs";
    default:
      return "";
  }
}

Status FileTooLarge(int fd, const std::string& path, const std::string& what, uint64_t fits, uint64_t need) {
  const uint64_t limit = ProbeFileSizeLimit(fd, fits, need);
  const std::string fs = FileSystemName(fd);
  std::string problem = Status::FromErrno("", EFBIG).message();
  problem += ": " + what + " needs " + std::to_string(need) + " bytes (" + FormatBytes(need) +
             "); the largest file this file system" + (fs.empty() ? "" : " (" + fs + ")") + " holds is " +
             std::to_string(limit) + " bytes (" + FormatBytes(limit) + ")";
  return Status::IOError(path, problem);
}

}  // namespace momenta
