// Thin, errno-checked wrappers over the POSIX file calls that every backend
// shares, so each error message is built the same way in one place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"

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
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC added; errors name `path`.
Result<FileDescriptor> OpenFile(const std::string& path, int flags, int mode = 0644);

// Reads exactly `length` bytes (retrying short reads and EINTR). Reaching end
// of file first is "IO error: <path>: read past end of file (file shrank?)".
Status PreadFully(int fd, const std::string& path, uint64_t offset, size_t length, char* dest);
// Writes all `length` bytes (retrying short writes and EINTR).
Status PwriteFully(int fd, const std::string& path, uint64_t offset, size_t length, const char* src);
// fallocate(FALLOC_FL_KEEP_SIZE) over the range: blocks reserved, file size
// unchanged; OK when the file system lacks it.
Status AllocateRange(int fd, const std::string& path, uint64_t offset, uint64_t length);
Status SyncData(int fd, const std::string& path);
Result<uint64_t> FileSize(int fd, const std::string& path);

// fsync of a folder, so that files created or removed in it survive a crash.
Status SyncDirectory(const std::string& dir);

// Makes `path` hold exactly `bytes`, by way of `temp` (a name in the same
// folder): the bytes go to `temp` (its blocks reserved first, so a full disk
// shows before any byte is written), then `temp` is renamed over `path`. A
// reader, or a crash, finds the old file or the new one, never a part. With
// `sync` the bytes are synced before the rename and the folder after it, so
// the new file survives a machine crash once this returns. On failure `temp`
// is removed and `path` is as it was. Returns the new file, open read-write
// (for a caller that goes on writing it in place).
Result<FileDescriptor> ReplaceFile(const std::string& path, const std::string& temp, std::string_view bytes, bool sync);

// The message of a read that ran past end of file.
Status ReadPastEnd(const std::string& path, uint64_t offset, size_t length);

}  // namespace momenta
