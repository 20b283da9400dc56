// Constructors of the concrete backends, for io_backend.cc's factory only.
// Each backend class lives in an anonymous namespace in its own .cc file.
#pragma once

#include <memory>
#include <string>

#include "storage/io/io_backend.h"
#include "storage/io/posix_file.h"

namespace momenta::internal {

// What every backend does the same way, on a buffered file descriptor it owns:
// Write (pwrite), Allocate (fallocate), Sync (fdatasync) and Size (fstat).
// Backends differ only in how they read (and name themselves).
class FdBackend : public IoBackend {
 public:
  Status Write(uint64_t offset, std::span<const char> data) override {
    return PwriteFully(fd_.get(), path(), offset, data.size(), data.data());
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    return AllocateRange(fd_.get(), path(), offset, length);
  }
  Status Sync() override { return SyncData(fd_.get(), path()); }
  Result<uint64_t> Size() override { return FileSize(fd_.get(), path()); }
  Result<std::vector<ByteRange>> DataExtents(uint64_t begin, uint64_t end) override {
    return DataExtentsOf(fd_.get(), path(), begin, end);
  }

 protected:
  FdBackend(std::string path, FileDescriptor fd) : IoBackend(std::move(path)), fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }

 private:
  const FileDescriptor fd_;
};

Result<std::unique_ptr<IoBackend>> OpenPreadBackend(const std::string& path, const IoOptions& options);
Result<std::unique_ptr<IoBackend>> OpenMmapBackend(const std::string& path, const IoOptions& options);
// Compiled only with liburing (MOMENTA_HAVE_URING). When the kernel refuses a
// ring (ENOSYS, EPERM under seccomp or io_uring_disabled, ENOMEM from memlock
// limits) it returns NotSupported with the reason, e.g. "Not supported:
// io_uring unavailable (Operation not permitted)", which lets kAuto fall back;
// every other failure (missing file, permissions) is an ordinary IO error.
Result<std::unique_ptr<IoBackend>> OpenUringBackend(const std::string& path, const IoOptions& options);

}  // namespace momenta::internal
