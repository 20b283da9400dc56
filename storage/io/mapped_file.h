// MappedFile: a whole file mapped shared, read-write or read-only
// (Boost.Interprocess file_mapping + mapped_region), so every process that
// opens it sees one copy and reopening costs no reads. Used for the persisted
// moment buffer (buffers/tree/tree_file.h) and for a writer's stores into the
// array (ArrayStore, storage/array/array_store.h, with ScatteredStores).
//
// The file's size is fixed while mapped: Create() sizes it first, Open()
// checks it against `expected_size` before mapping. A store into a part of
// the mapping that is a hole on disk raises SIGBUS when the disk is full (and
// any access does once the file is truncated under the mapping), so writers
// either Allocate() a range before their first store into it (the tree's
// nodes; Create can allocate everything up front) or touch it through
// GuardedCopy (storage/io/fault_guard.h), which returns false instead (the
// array's elements).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/util/status.h"

namespace momenta {

class MappedFile {
 public:
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Creates (or truncates) `path` to `size` zero bytes and maps it writable.
  // allocate_all: reserve every block now; else the file stays sparse.
  static Result<std::unique_ptr<MappedFile>> Create(const std::string& path, uint64_t size, bool allocate_all);
  // Maps an existing file; Corruption unless its size is `expected_size`
  // (pass 0 to accept any non-zero size).
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path, bool writable, uint64_t expected_size = 0);

  const std::string& path() const { return path_; }
  char* data() { return data_; }
  const char* data() const { return data_; }
  uint64_t size() const { return size_; }
  bool writable() const { return writable_; }

  // Reserves disk blocks for [offset, offset + length) (fallocate): after OK,
  // stores into that range cannot fault for lack of space.
  [[nodiscard]] Status Allocate(uint64_t offset, uint64_t length);

  // msync of [offset, offset + length) (rounded out to pages): when it returns
  // OK those bytes are on disk.
  [[nodiscard]] Status Flush(uint64_t offset, uint64_t length);
  [[nodiscard]] Status FlushAll() { return Flush(0, size_); }

  // Page-cache hints (best effort, errors ignored; see storage/io/scattered_stores.h).
  // The mapping will be accessed at random: faults read single pages.
  void AdviseRandomAccess();
  // Whether any page of [offset, offset + length) is in the page cache.
  bool AnyPageCached(uint64_t offset, uint64_t length) const;
  // Whether every page of [offset, offset + length) is in the page cache
  // (false when the kernel would not say, or the range leaves the mapping).
  // mincore over a buffer on the stack: no allocation, one system call per
  // 256 KiB.
  bool AllPagesCached(uint64_t offset, uint64_t length) const;
  // (*resident)[k] & 1: whether the k-th page of [offset, offset + length)
  // (offset a multiple of the page size) is in the page cache; false when
  // the kernel would not say (mincore failed).
  bool CachedPages(uint64_t offset, uint64_t length, std::vector<unsigned char>* resident) const;
  // Drops the clean cached pages of [offset, offset + length) (dirty pages,
  // and pages some process maps, stay).
  void DropCleanPages(uint64_t offset, uint64_t length);
  // Starts reading the uncached pages of [offset, offset + length) in one go
  // (under MADV_RANDOM, faults would read them a page at a time).
  void Prefetch(uint64_t offset, uint64_t length);
  // Maps [offset, offset + length) in now, so that later loads do not fault:
  // its uncached pages are read in one go (POSIX_FADV_WILLNEED), then the
  // page tables filled (MADV_POPULATE_READ, which waits for those reads). A
  // reader's first query would otherwise fault the pages in one at a time,
  // each a synchronous read. Best effort: before Linux 5.14 (EINVAL) the
  // pages fault in as before; a hole maps the zero page.
  void Populate(uint64_t offset, uint64_t length);

 private:
  struct Impl;
  MappedFile(std::string path, std::unique_ptr<Impl> impl, bool writable, int fd);

  const std::string path_;
  std::unique_ptr<Impl> impl_;
  char* data_ = nullptr;
  uint64_t size_ = 0;
  const bool writable_;
  int fd_ = -1;  // kept open for Allocate; owned
};

// This process's read-only mappings of `path` (found in /proc/self/maps) let
// go of their pages (MADV_DONTNEED: only their page-table entries go; the
// page cache keeps the pages). A page some process maps survives
// drop_caches and POSIX_FADV_DONTNEED, and a reader keeps its array mapped
// (queries sum cached pieces there: ArrayFile::ReadMapping), so whoever
// measures a cold query in the same process calls this before the drop.
// Best effort: errors are ignored.
void ReleaseMappedPagesOf(const std::string& path);

}  // namespace momenta
