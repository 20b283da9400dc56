#include "storage/array/sidecar.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "storage/io/posix_file.h"
#include "storage/util/crc32c.h"

namespace momenta {
namespace {

constexpr char kMagic[8] = {'M', 'O', 'M', 'S', 'I', 'D', 'E', '\0'};
constexpr uint32_t kVersion = 1;

// realpath(3) when the path resolves; else the path as given.
std::string Resolved(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) != nullptr) return buf;
  return path;
}

// Absolute and resolved: realpath, or the lexical absolute path when the
// file does not exist (yet).
std::string AbsoluteResolved(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) != nullptr) return buf;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

bool IsSymlink(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

template <typename T>
void Put(char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
T Get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint64_t ShapeHash(const std::vector<uint64_t>& shape) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the dims' bytes
  for (uint64_t d : shape)
    for (int b = 0; b < 8; ++b) {
      h ^= (d >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  return h;
}

}  // namespace

std::string SidecarPath(const std::string& array_path, const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (const char* root = std::getenv("MOMENTA_SIDECAR_DIR"); root != nullptr && *root != '\0') {
    std::string r = root;
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    return r + AbsoluteResolved(array_path) + ".momenta";
  }
  return (IsSymlink(array_path) ? Resolved(array_path) : array_path) + ".momenta";
}

Result<SidecarIdentity> SidecarIdentity::Of(const std::string& array_path, const NpyHeader& header) {
  struct stat st;
  if (::stat(array_path.c_str(), &st) != 0) return Status::FromErrno(array_path, errno);
  SidecarIdentity id;
  id.dtype = header.dtype;
  id.length = header.length();
  id.data_offset = header.data_offset;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.shape_hash = ShapeHash(header.shape);
  id.ndim = static_cast<uint32_t>(header.shape.size());
  return id;
}

std::string SidecarIdentity::Describe() const {
  return std::string(DTypeName(dtype)) + ", " + std::to_string(length) + " element(s) in " + std::to_string(ndim) +
         " dimension(s), data at byte " + std::to_string(data_offset);
}

std::string SidecarIdentityPath(const std::string& sidecar) { return sidecar + "/identity"; }

Result<SidecarIdentity> ReadSidecarIdentity(const std::string& sidecar) {
  const std::string path = SidecarIdentityPath(sidecar);
  if (::access(path.c_str(), F_OK) != 0) return Status::NotFound(path, "no identity record");
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  char b[kSidecarIdentityBytes];
  auto size = FileSize(fd->get(), path);
  if (!size.ok()) return size.status();
  if (*size != kSidecarIdentityBytes)
    return Status::Corruption(path, "identity record is " + std::to_string(*size) + " bytes, not 64");
  MOMENTA_RETURN_IF_ERROR(PreadFully(fd->get(), path, 0, sizeof b, b));
  if (std::memcmp(b, kMagic, 8) != 0) return Status::Corruption(path, "not a momenta identity record (bad magic)");
  if (Get<uint32_t>(b + 60) != Crc32c(b, 60)) return Status::Corruption(path, "identity record fails its checksum");
  if (Get<uint32_t>(b + 8) != kVersion)
    return Status::NotSupported(path, "identity record version " + std::to_string(Get<uint32_t>(b + 8)));
  SidecarIdentity id;
  const uint32_t dtype = Get<uint32_t>(b + 12);
  if (dtype > static_cast<uint32_t>(DType::kU1)) return Status::Corruption(path, "identity record names no dtype");
  id.dtype = static_cast<DType>(dtype);
  id.length = Get<uint64_t>(b + 16);
  id.data_offset = Get<uint64_t>(b + 24);
  id.device = Get<uint64_t>(b + 32);
  id.inode = Get<uint64_t>(b + 40);
  id.shape_hash = Get<uint64_t>(b + 48);
  id.ndim = Get<uint32_t>(b + 56);
  return id;
}

Status WriteSidecarIdentity(const std::string& sidecar, const SidecarIdentity& id) {
  char b[kSidecarIdentityBytes] = {};
  std::memcpy(b, kMagic, 8);
  Put<uint32_t>(b + 8, kVersion);
  Put<uint32_t>(b + 12, static_cast<uint32_t>(id.dtype));
  Put<uint64_t>(b + 16, id.length);
  Put<uint64_t>(b + 24, id.data_offset);
  Put<uint64_t>(b + 32, id.device);
  Put<uint64_t>(b + 40, id.inode);
  Put<uint64_t>(b + 48, id.shape_hash);
  Put<uint32_t>(b + 56, id.ndim);
  Put<uint32_t>(b + 60, Crc32c(b, 60));
  const std::string path = SidecarIdentityPath(sidecar);
  return ReplaceFile(path, path + ".tmp-" + std::to_string(::getpid()), std::string_view(b, sizeof b),
                     /*sync=*/true)
      .status();
}

Result<std::string> SetSidecarAside(const std::string& sidecar) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string target = sidecar + ".orphan-" + stamp;
  for (int k = 2; ::access(target.c_str(), F_OK) == 0; ++k)
    target = sidecar + ".orphan-" + stamp + "-" + std::to_string(k);
  if (::rename(sidecar.c_str(), target.c_str()) != 0) return Status::FromErrno(sidecar, errno);
  return target;
}

bool SidecarWritable(const std::string& sidecar) {
  if (::access(sidecar.c_str(), F_OK) == 0) return ::access(sidecar.c_str(), W_OK | X_OK) == 0;
  // Not there yet: the nearest existing ancestor must let us create it.
  std::filesystem::path p = std::filesystem::path(sidecar).parent_path();
  while (!p.empty() && ::access(p.c_str(), F_OK) != 0) p = p.parent_path();
  if (p.empty()) p = ".";
  return ::access(p.c_str(), W_OK | X_OK) == 0;
}

}  // namespace momenta
