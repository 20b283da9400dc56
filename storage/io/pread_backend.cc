// The always-available backend: pread/pwrite through the page cache.
#include <fcntl.h>

#include "storage/io/io_backends_internal.h"
#include "storage/io/posix_file.h"

namespace momenta::internal {
namespace {

class PreadBackend final : public FdBackend {
 public:
  PreadBackend(std::string path, FileDescriptor fd) : FdBackend(std::move(path), std::move(fd)) {}

  std::string Name() const override { return "pread"; }

  Status Read(uint64_t offset, size_t length, char* dest) override {
    return PreadFully(fd(), path(), offset, length, dest);
  }
};

}  // namespace

Result<std::unique_ptr<IoBackend>> OpenPreadBackend(const std::string& path, const IoOptions& options) {
  auto fd = OpenFile(path, options.writable ? O_RDWR : O_RDONLY);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<IoBackend>(new PreadBackend(path, std::move(fd).value()));
}

}  // namespace momenta::internal
