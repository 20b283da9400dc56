#include "buffers/tree_file.h"

#include <sys/stat.h>

namespace momenta {

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

}  // namespace momenta
