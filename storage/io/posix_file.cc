#include "storage/io/posix_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace momenta {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileDescriptor> OpenFile(const std::string& path, int flags, int mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Status::FromErrno(path, errno);
  return FileDescriptor(fd);
}

Status ReadPastEnd(const std::string& path, uint64_t offset, size_t length) {
  return Status::IOError(path, "read of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                                   " runs past end of file (file shrank?)");
}

Status PreadFully(int fd, const std::string& path, uint64_t offset, size_t length, char* dest) {
  size_t done = 0;
  while (done < length) {
    ssize_t r = ::pread(fd, dest + done, length - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(path, errno);
    }
    if (r == 0) return ReadPastEnd(path, offset, length);
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status PwriteFully(int fd, const std::string& path, uint64_t offset, size_t length, const char* src) {
  size_t done = 0;
  while (done < length) {
    ssize_t w = ::pwrite(fd, src + done, length - done, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(path, errno);
    }
    done += static_cast<size_t>(w);
  }
  return Status::OK();
}

Status AllocateRange(int fd, const std::string& path, uint64_t offset, uint64_t length) {
  if (length == 0) return Status::OK();
  int rc;
  do {
    rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (rc < 0 && errno == EINTR);
  if (rc < 0 && errno != EOPNOTSUPP && errno != ENOSYS) return Status::FromErrno(path, errno);
  return Status::OK();
}

Status SyncData(int fd, const std::string& path) {
  if (::fdatasync(fd) < 0) return Status::FromErrno(path, errno);
  return Status::OK();
}

Result<uint64_t> FileSize(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) < 0) return Status::FromErrno(path, errno);
  return static_cast<uint64_t>(st.st_size);
}

Status SyncDirectory(const std::string& dir) {
  auto fd = OpenFile(dir, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  if (::fsync(fd->get()) != 0) return Status::FromErrno(dir, errno);
  return Status::OK();
}

Result<FileDescriptor> ReplaceFile(const std::string& path, const std::string& temp, std::string_view bytes,
                                   bool sync) {
  auto fd = OpenFile(temp, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!fd.ok()) return fd.status();
  Status s = AllocateRange(fd->get(), temp, 0, bytes.size());
  if (s.ok()) s = PwriteFully(fd->get(), temp, 0, bytes.size(), bytes.data());
  if (s.ok() && sync) s = SyncData(fd->get(), temp);
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) s = Status::FromErrno(path, errno);
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  if (sync) {
    const std::string folder = std::filesystem::path(path).parent_path().string();
    MOMENTA_RETURN_IF_ERROR(SyncDirectory(folder.empty() ? "." : folder));
  }
  return fd;
}

}  // namespace momenta
