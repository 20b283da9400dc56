// The always-available backend: pread/pwrite through the page cache.
#include <fcntl.h>

#include "storage/io_backends_internal.h"
#include "storage/posix_file.h"

namespace momenta::internal {
namespace {

class PreadBackend final : public IoBackend {
 public:
  PreadBackend(std::string path, FileDescriptor fd) : IoBackend(std::move(path)), fd_(std::move(fd)) {}

  std::string Name() const override { return "pread"; }

  Status Read(uint64_t offset, size_t length, char* dest) override {
    return PreadFully(fd_.get(), path(), offset, length, dest);
  }
  Status Write(uint64_t offset, std::span<const char> data) override {
    return PwriteFully(fd_.get(), path(), offset, data.size(), data.data());
  }
  Status Allocate(uint64_t offset, uint64_t length) override {
    return AllocateRange(fd_.get(), path(), offset, length);
  }
  Status Sync() override { return SyncData(fd_.get(), path()); }
  Result<uint64_t> Size() override { return FileSize(fd_.get(), path()); }

 private:
  const FileDescriptor fd_;
};

}  // namespace

Result<std::unique_ptr<IoBackend>> OpenPreadBackend(const std::string& path,
                                                    const IoOptions& options) {
  auto fd = OpenFile(path, options.writable ? O_RDWR : O_RDONLY);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<IoBackend>(new PreadBackend(path, std::move(fd).value()));
}

}  // namespace momenta::internal
