#include "buffers/tree/tree_file.h"

#include <sys/stat.h>

#include <cstddef>
#include <cstring>

#include <fstream>
#include <functional>
#include <string>

#include "storage/util/crc32c.h"

namespace momenta {

uint32_t ParamsCrc(const TreeFileHeader& h) {
  const char* bytes = reinterpret_cast<const char*>(&h);
  const uint32_t head = Crc32c(bytes, offsetof(TreeFileHeader, state));  // magic, version
  return Crc32cExtend(head, bytes + offsetof(TreeFileHeader, order),
                      offsetof(TreeFileHeader, ola_nodes) - offsetof(TreeFileHeader, order));
}

uint32_t SealedHeaderCrc(const TreeFileHeader& h) {
  TreeFileHeader sealed;
  std::memcpy(&sealed, &h, sizeof sealed);
  sealed.state = kTreeClean;
  sealed.reader_wait_until_ns = 0;
  sealed.boot_id = 0;
  sealed.durable_marks = 0;
  sealed.chunk_first_sequence = 0;
  sealed.clean_crc = 0;
  return Crc32c(&sealed, sizeof sealed);
}

Result<ArrayIdentity> IdentityOf(const std::string& array_path) {
  struct stat st;
  if (::stat(array_path.c_str(), &st) != 0) return Status::FromErrno(array_path, errno);
  ArrayIdentity id;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

uint64_t CurrentBootId() {
  static const uint64_t id = [] {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string text;
    std::getline(in, text);
    const uint64_t h = std::hash<std::string>{}(text);
    return h == 0 ? 1 : h;  // 0 means "no writer yet"
  }();
  return id;
}

}  // namespace momenta
