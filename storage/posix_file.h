// Thin, errno-checked wrappers over the POSIX file calls that every backend
// shares, so each error message is built the same way in one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/status.h"

namespace momenta {

// An owned file descriptor; closed on destruction.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(o.release()) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { int fd = fd_; fd_ = -1; return fd; }

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC added; errors name `path`.
Result<FileDescriptor> OpenFile(const std::string& path, int flags, int mode = 0644);

// Reads exactly `length` bytes (retrying short reads and EINTR). Reaching end
// of file first is "IO error: <path>: read past end of file (file shrank?)".
Status PreadFully(int fd, const std::string& path, uint64_t offset, size_t length, char* dest);
// Writes all `length` bytes (retrying short writes and EINTR).
Status PwriteFully(int fd, const std::string& path, uint64_t offset, size_t length,
                   const char* src);
// fallocate(FALLOC_FL_KEEP_SIZE) over the range: blocks reserved, file size
// unchanged; OK when the file system lacks it.
Status AllocateRange(int fd, const std::string& path, uint64_t offset, uint64_t length);
Status SyncData(int fd, const std::string& path);
Result<uint64_t> FileSize(int fd, const std::string& path);

// The message of a read that ran past end of file.
Status ReadPastEnd(const std::string& path, uint64_t offset, size_t length);

}  // namespace momenta
