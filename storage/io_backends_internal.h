// Constructors of the concrete backends, for io_backend.cc's factory only.
// Each backend class lives in an anonymous namespace in its own .cc file.
#pragma once

#include <memory>
#include <string>

#include "storage/io_backend.h"

namespace momenta::internal {

Result<std::unique_ptr<IoBackend>> OpenPreadBackend(const std::string& path,
                                                    const IoOptions& options);
Result<std::unique_ptr<IoBackend>> OpenMmapBackend(const std::string& path,
                                                   const IoOptions& options);
// Compiled only with liburing (MOMENTA_HAVE_URING). When the kernel refuses a
// ring (ENOSYS, EPERM under seccomp or io_uring_disabled, ENOMEM from memlock
// limits) it returns NotSupported with the reason, e.g. "Not supported:
// io_uring unavailable (Operation not permitted)", which lets kAuto fall back;
// every other failure (missing file, permissions) is an ordinary IO error.
Result<std::unique_ptr<IoBackend>> OpenUringBackend(const std::string& path,
                                                    const IoOptions& options);

}  // namespace momenta::internal
