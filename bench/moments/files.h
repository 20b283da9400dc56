// Plain file helpers of the driver: reading a small text file, dropping a
// file's page cache, the free space of a folder, and page-aligned buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace momenta::moments_driver {

// The whole file into *out; false (and *out unspecified) if it cannot be opened.
bool ReadFileText(const std::string& path, std::string* out);

// posix_fadvise(DONTNEED) on the whole file: its clean cached pages go
// (mapped and dirty pages stay). A file that cannot be opened is skipped.
void DropCache(const std::string& path);

// Bytes an unprivileged writer may still use in dir's file system; dies if
// statvfs fails.
uint64_t FreeBytes(const std::string& dir);

// A zeroed buffer of `size` bytes at a 4096-byte boundary (at least 4096
// bytes are allocated), for O_DIRECT reads. Owns its memory.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t n);
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data;
  size_t size;
};

}  // namespace momenta::moments_driver
