#include "bench/moments/files.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/moments/common.h"
#include "storage/io/mapped_file.h"

namespace momenta::moments_driver {

bool ReadFileText(const std::string& path, std::string* out) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  std::fclose(f);
  return true;
}

void DropCache(const std::string& path) {
  ReleaseMappedPagesOf(path);  // a page this process maps is not dropped
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

uint64_t FreeBytes(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0) Die(dir + ": " + std::strerror(errno));
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

AlignedBuffer::AlignedBuffer(size_t n) : size(n) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, std::max<size_t>(n, 4096)) != 0) Die("out of memory");
  data = static_cast<char*>(p);
  std::memset(data, 0, n);
}

AlignedBuffer::~AlignedBuffer() { std::free(data); }

}  // namespace momenta::moments_driver
