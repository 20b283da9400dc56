// SCAFFOLD: replaced by the real backend before the first commit.
#include "storage/io_backends_internal.h"
namespace momenta::internal {
Result<std::unique_ptr<IoBackend>> OpenUringBackend(const std::string& path, const IoOptions&) {
  return Status::NotSupported(path, "scaffold");
}
}  // namespace momenta::internal
