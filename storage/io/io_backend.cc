// The backend factory and the parts of IoBackend shared by every backend.
// This is the only file that looks at MOMENTA_HAVE_URING.
#include "storage/io/io_backend.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/stat.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "storage/io/io_backends_internal.h"
#include "storage/io/posix_file.h"
#include "storage/io/read_flow.h"

namespace momenta {

Status IoBackend::ReadBatch(std::span<const ReadRequest> requests) {
  for (const ReadRequest& r : requests) MOMENTA_RETURN_IF_ERROR(Read(r.offset, r.length, r.dest));
  return Status::OK();
}

Status IoBackend::ReadBatchWith(std::span<const ReadRequest> mine, IoBackend& other,
                                std::span<const ReadRequest> theirs) {
  MOMENTA_RETURN_IF_ERROR(ReadBatch(mine));
  return other.ReadBatch(theirs);
}

Status IoBackend::ReadStream(std::span<const ReadRequest> requests, ReadFlow& flow) {
  Status status = StreamReads(requests, flow);
  flow.Finish();
  return status;
}

Status IoBackend::StreamReads(std::span<const ReadRequest> requests, ReadFlow& flow) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!flow.WaitAllowed(i)) return Status::OK();  // stopped by the consumer
    MOMENTA_RETURN_IF_ERROR(Read(requests[i].offset, requests[i].length, requests[i].dest));
    flow.Landed(i + 1);
  }
  return Status::OK();
}

std::string_view IoKindName(IoKind kind) {
  switch (kind) {
    case IoKind::kAuto:
      return "auto";
    case IoKind::kUring:
      return "uring";
    case IoKind::kMmap:
      return "mmap";
    case IoKind::kPread:
      return "pread";
  }
  return "?";
}

Result<IoKind> ParseIoKind(std::string_view text, const std::string& what) {
  for (IoKind k : {IoKind::kAuto, IoKind::kUring, IoKind::kMmap, IoKind::kPread})
    if (text == IoKindName(k)) return k;
  return Status::InvalidArgument(what,
                                 "unknown backend '" + std::string(text) + "' (expected auto, uring, mmap or pread)");
}

namespace {

Result<std::unique_ptr<IoBackend>> OpenBackendOfKind(const std::string& path, const IoOptions& options,
                                                     std::string* notice) {
  switch (options.kind) {
    case IoKind::kPread:
      return internal::OpenPreadBackend(path, options);
    case IoKind::kMmap:
      return internal::OpenMmapBackend(path, options);
    case IoKind::kUring:
#ifdef MOMENTA_HAVE_URING
      return internal::OpenUringBackend(path, options);
#else
      return Status::NotSupported(path, "io_uring backend not built (liburing-dev was missing)");
#endif
    case IoKind::kAuto: {
#ifdef MOMENTA_HAVE_URING
      auto uring = internal::OpenUringBackend(path, options);
      // Only a refused ring falls back; a missing or unreadable file is the
      // same error whichever backend we pick.
      if (uring.ok() || uring.status().code() != Status::Code::kNotSupported) return uring;
      if (notice) *notice = uring.status().ToString() + "; using pread";
#else
      if (notice) *notice = "io_uring backend not built (liburing-dev was missing); using pread";
#endif
      return internal::OpenPreadBackend(path, options);
    }
  }
  return Status::InvalidArgument(path, "unknown I/O backend");
}

}  // namespace

Result<std::unique_ptr<IoBackend>> OpenIoBackend(const std::string& path, const IoOptions& options,
                                                 std::string* notice) {
  auto backend = OpenBackendOfKind(path, options, notice);
  if (backend.ok()) (*backend)->maps_resident_ = options.map_resident;
  return backend;
}

DirectIoAlignment ProbeDirectIoAlignment(const std::string& path) {
  DirectIoAlignment a;
  auto fd = OpenFile(path, O_RDONLY | O_DIRECT);
  if (!fd.ok()) return a;  // EINVAL: the file system refuses O_DIRECT (tmpfs)
#ifdef STATX_DIOALIGN
  struct statx stx {};
  if (::syscall(SYS_statx, fd->get(), "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align != 0) {
    a.memory = stx.stx_dio_mem_align;
    a.offset = stx.stx_dio_offset_align;
    return a;
  }
#endif
  // Fallback: the logical block size of the device, else the fs block size, else 4096.
  struct stat st;
  uint32_t block = 4096;
  if (::fstat(fd->get(), &st) == 0 && st.st_blksize > 0) block = static_cast<uint32_t>(st.st_blksize);
  a.memory = block;
  a.offset = block;
  return a;
}

}  // namespace momenta
