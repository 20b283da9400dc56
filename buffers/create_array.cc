#include "buffers/create_array.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "storage/array/array_file.h"
#include "storage/array/sidecar.h"

namespace momenta {

Result<std::unique_ptr<BufferedArray>> CreateBufferedArray(const std::string& path, DType dtype,
                                                           std::span<const uint64_t> shape,
                                                           BufferedArrayOptions options,
                                                           std::vector<std::string>* notices) {
  options.io.writable = true;
  options.fresh_array = true;
  const std::string sidecar = SidecarPath(path, options.sidecar);
  std::error_code ec;
  const bool had_sidecar = std::filesystem::exists(std::filesystem::symlink_status(sidecar, ec));
  std::string notice;
  auto array = ArrayFile::Create(path, dtype, shape, options.io, &notice);
  if (!notice.empty() && notices) notices->push_back(notice);
  if (!array.ok()) return array.status();  // Create removed what it made
  array->reset();
  auto opened = BufferedArray::Open(path, options, notices);
  if (!opened.ok()) {
    ::unlink(path.c_str());
    if (!had_sidecar) std::filesystem::remove_all(sidecar, ec);
  }
  return opened;
}

}  // namespace momenta
