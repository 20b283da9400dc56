// The mmap backend: reads copy out of a read-only shared mapping of the whole
// file (Boost.Interprocess file_mapping + mapped_region); writes go through
// pwrite on a descriptor of the same file.
//
// Why writes do not store through the map: a store into a sparse hole makes
// the kernel allocate a block at fault time, and on a full disk that fault is
// a SIGBUS with no errno to report. pwrite returns ENOSPC instead, which
// becomes "IO error: <path>: No space left on device". The mapping is
// MAP_SHARED, so it sees those writes through the page cache at once.
//
// Why reads are guarded: another process may truncate the file under us. A
// copy from a mapped page that now lies wholly past end of file raises
// SIGBUS. The copy runs with a thread-local recovery point; the SIGBUS handler
// (installed once per process, chaining to whatever handler was there before
// for faults that are not ours) jumps back to it and the read returns
// "IO error: <path>: ... (file shrank?)". Bytes of the last, partial page past
// the new end read as zeros (the kernel does not fault there), as with any
// racing truncate.
//
// This is the one seam where Boost.Interprocess throws; every exception is
// caught here and turned into a Status.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <cstring>
#include <exception>

#include "storage/io/fault_guard.h"
#include "storage/io/io_backends_internal.h"
#include "storage/io/posix_file.h"

namespace momenta::internal {
namespace {

namespace bip = boost::interprocess;

const uint64_t kPageSize = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));

// ---- the backend -----------------------------------------------------------

Status FromBoost(const std::string& path, const std::exception& e) {
  if (const auto* ipc = dynamic_cast<const bip::interprocess_exception*>(&e);
      ipc != nullptr && ipc->get_native_error() != 0)
    return Status::FromErrno(path, ipc->get_native_error());
  return Status::IOError(path, std::string("cannot map file: ") + e.what());
}

bool SameFile(int fd_a, int fd_b) {
  struct stat a, b;
  return ::fstat(fd_a, &a) == 0 && ::fstat(fd_b, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

class MmapBackend final : public FdBackend {
 public:
  MmapBackend(std::string path, FileDescriptor fd, bip::file_mapping mapping)
      : FdBackend(std::move(path), std::move(fd)), mapping_(std::move(mapping)) {}

  std::string Name() const override { return "mmap"; }

  // Maps the file's current size (nothing when it is empty).
  Status Remap() {
    auto size = FileSize(fd(), path());
    if (!size.ok()) return size.status();
    if (*size == mapped_size_) return Status::OK();
    try {
      region_ = *size == 0 ? bip::mapped_region()
                           : bip::mapped_region(mapping_, bip::read_only, 0, static_cast<size_t>(*size));
      mapped_size_ = *size;
      // No fault-time read-around: with a large read_ahead_kb it reads
      // megabytes for each 4 KiB random read. Prefetch() asks for what reads need.
      if (mapped_size_ != 0) region_.advise(bip::mapped_region::advice_random);
    } catch (const std::exception& e) {
      region_ = bip::mapped_region();
      mapped_size_ = 0;
      return FromBoost(path(), e);
    }
    return Status::OK();
  }

  Status Read(uint64_t offset, size_t length, char* dest) override {
    if (length == 0) return Status::OK();
    if (!Mapped(offset, length)) {
      MOMENTA_RETURN_IF_ERROR(Remap());  // the file may have grown (our writes, or others')
      if (!Mapped(offset, length)) return ReadPastEnd(path(), offset, length);
    }
    const char* base = static_cast<const char*>(region_.get_address());
    Prefetch(offset, length);
    if (GuardedCopy(dest, base + offset, length)) return Status::OK();
    (void)Remap();  // shrink the view to what is left; the next read sees the new end
    return Status::IOError(path(), "read of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                       " faulted in the mapping (file shrank?)");
  }

 private:
  // Asks the kernel (MADV_WILLNEED, asynchronous) for the pages of a read of
  // several pages in one go, rather than letting the copy fault them in one
  // by one; a read within one page just faults. While reads run
  // sequentially it keeps kReadAhead bytes requested beyond the reader,
  // topping up once half of that is used: our read-ahead, since
  // MADV_RANDOM turned the kernel's off. Advice only: errors are ignored.
  void Prefetch(uint64_t offset, size_t length) {
    static constexpr uint64_t kReadAhead = 2 << 20;
    const uint64_t end = offset + length;
    const bool sequential = offset == next_offset_ && offset != 0;
    next_offset_ = end;
    uint64_t from = offset;
    uint64_t to = end;
    if (sequential) {
      if (end + kReadAhead / 2 <= prefetched_end_) return;  // still far enough ahead
      from = std::max(offset, prefetched_end_);
      to = end + kReadAhead;
    } else if ((end - 1) / kPageSize == offset / kPageSize) {
      return;
    }
    to = std::min(to, mapped_size_);
    if (from >= to) return;
    prefetched_end_ = to;
    const uint64_t start = from / kPageSize * kPageSize;
    char* base = static_cast<char*>(region_.get_address());
    ::madvise(base + start, to - start, MADV_WILLNEED);
  }

  bool Mapped(uint64_t offset, size_t length) const {
    return offset <= mapped_size_ && length <= mapped_size_ - offset;
  }

  const bip::file_mapping mapping_;  // the same file, opened by Boost for mapping
  bip::mapped_region region_;        // bytes [0, mapped_size_) of the file; empty when 0
  uint64_t mapped_size_ = 0;
  uint64_t next_offset_ = 0;     // where the last read ended (sequential detection)
  uint64_t prefetched_end_ = 0;  // Prefetch() last asked for pages up to here
};

}  // namespace

Result<std::unique_ptr<IoBackend>> OpenMmapBackend(const std::string& path, const IoOptions& options) {
  auto fd = OpenFile(path, options.writable ? O_RDWR : O_RDONLY);
  if (!fd.ok()) return fd.status();
  InstallFaultGuard();
  try {
    bip::file_mapping mapping(path.c_str(), bip::read_only);
    const int map_fd = mapping.get_mapping_handle().handle;
    ::fcntl(map_fd, F_SETFD, FD_CLOEXEC);  // Boost opens without O_CLOEXEC
    if (!SameFile(fd->get(), map_fd)) return Status::IOError(path, "file was replaced while it was being opened");
    auto backend = std::make_unique<MmapBackend>(path, std::move(fd).value(), std::move(mapping));
    MOMENTA_RETURN_IF_ERROR(backend->Remap());
    return std::unique_ptr<IoBackend>(std::move(backend));
  } catch (const std::exception& e) {
    return FromBoost(path, e);
  }
}

}  // namespace momenta::internal
