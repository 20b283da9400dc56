#include "storage/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>

#include "storage/io/posix_file.h"

namespace momenta {

namespace bip = boost::interprocess;

struct MappedFile::Impl {
  bip::file_mapping mapping;
  bip::mapped_region region;
};

MappedFile::MappedFile(std::string path, std::unique_ptr<Impl> impl, bool writable, int fd)
    : path_(std::move(path)), impl_(std::move(impl)), writable_(writable), fd_(fd) {
  data_ = static_cast<char*>(impl_->region.get_address());
  size_ = impl_->region.get_size();
}

MappedFile::~MappedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status MappedFile::Allocate(uint64_t offset, uint64_t length) { return AllocateRange(fd_, path_, offset, length); }

Result<std::unique_ptr<MappedFile>> MappedFile::Create(const std::string& path, uint64_t size, bool allocate_all) {
  {
    auto fd = OpenFile(path, O_RDWR | O_CREAT | O_TRUNC);
    if (!fd.ok()) return fd.status();
    if (::ftruncate(fd->get(), static_cast<off_t>(size)) != 0) return Status::FromErrno(path, errno);
    if (allocate_all) MOMENTA_RETURN_IF_ERROR(AllocateRange(fd->get(), path, 0, size));
  }
  return Open(path, /*writable=*/true, size);
}

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path, bool writable, uint64_t expected_size) {
  auto fd = OpenFile(path, writable ? O_RDWR : O_RDONLY);
  if (!fd.ok()) return fd.status();
  auto size = FileSize(fd->get(), path);
  if (!size.ok()) return size.status();
  const uint64_t actual = *size;
  if (actual == 0 || (expected_size != 0 && actual != expected_size))
    return Status::Corruption(
        path, "size is " + std::to_string(actual) + " bytes, expected " + std::to_string(expected_size));
  // Boost.Interprocess throws; this is the seam where that stops.
  try {
    auto impl = std::make_unique<Impl>();
    const auto mode = writable ? bip::read_write : bip::read_only;
    impl->mapping = bip::file_mapping(path.c_str(), mode);
    impl->region = bip::mapped_region(impl->mapping, mode, 0, actual);
    return std::unique_ptr<MappedFile>(new MappedFile(path, std::move(impl), writable, fd->release()));
  } catch (const bip::interprocess_exception& e) {
    return Status::IOError(path, std::string("cannot map: ") + e.what());
  }
}

Status MappedFile::Flush(uint64_t offset, uint64_t length) {
  if (!writable_ || length == 0) return Status::OK();
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t end = std::min(size_, offset + length);
  if (::msync(data_ + begin, end - begin, MS_SYNC) != 0) return Status::FromErrno(path_, errno);
  return Status::OK();
}

void MappedFile::AdviseRandomAccess() { (void)::madvise(data_, size_, MADV_RANDOM); }

bool MappedFile::CachedPages(uint64_t offset, uint64_t length, std::vector<unsigned char>* resident) const {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min(size_, offset + length);
  resident->assign(end > offset ? (end - offset + page - 1) / page : 0, 0);
  if (end <= offset) return true;
  return ::mincore(data_ + offset, end - offset, resident->data()) == 0;
}

bool MappedFile::AnyPageCached(uint64_t offset, uint64_t length) const {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  std::vector<unsigned char> resident;
  if (!CachedPages(begin, offset + length - begin, &resident)) return true;  // assume so
  return std::any_of(resident.begin(), resident.end(), [](unsigned char r) { return r & 1; });
}

bool MappedFile::AllPagesCached(uint64_t offset, uint64_t length) const {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (offset > size_ || length > size_ - offset) return false;
  constexpr size_t kPages = 64;
  unsigned char resident[kPages];
  const uint64_t end = offset + length;
  for (uint64_t at = offset / page * page; at < end;) {
    const uint64_t n = std::min<uint64_t>(end - at, kPages * page);
    if (::mincore(data_ + at, n, resident) != 0) return false;
    for (uint64_t k = 0; k < (n + page - 1) / page; ++k)
      if (!(resident[k] & 1)) return false;
    at += n;
  }
  return true;
}

void MappedFile::Prefetch(uint64_t offset, uint64_t length) {
  (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_WILLNEED);
}

void MappedFile::Populate(uint64_t offset, uint64_t length) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14 (uapi/asm-generic/mman-common.h)
#endif
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t end = std::min(size_, offset + length);
  if (end <= begin) return;
  Prefetch(begin, end - begin);
  (void)::madvise(data_ + begin, end - begin, MADV_POPULATE_READ);
}

void MappedFile::DropCleanPages(uint64_t offset, uint64_t length) {
  (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
}

void ReleaseMappedPagesOf(const std::string& path) {
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) return;
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return;
  char line[PATH_MAX + 256];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long begin = 0, end = 0;
    char perms[8] = {};
    int name_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &begin, &end, perms, &name_at) < 3 || name_at == 0) continue;
    std::string name(line + name_at);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    if (name == real && perms[1] != 'w') (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  std::fclose(maps);
}

}  // namespace momenta
