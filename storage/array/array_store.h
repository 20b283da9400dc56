// ArrayStore: a writer's stores into an array file's elements, through one
// shared writable mapping of the file (storage/io/mapped_file.h), so scattered
// single-element stores cost no system call. Made by ArrayFile::OpenStore().
//
// Every access is a guarded copy (storage/io/fault_guard.h): a page that faults
// with SIGBUS — a store into a sparse hole on a full disk, any access once the
// file was truncated under the mapping — gives a Status naming the file and
// the element instead of killing the process:
//   "IO error: data.npy: No space left on device"            (the disk is full)
//   "IO error: data.npy: cannot write element 7 (the file shrank, or the disk is full)"
// After such a failure the element may hold some of the new bytes.
//
// Page cache: stores into a block the page cache holds in large folios would
// dirty (and write back) the whole folio; PrepareForStore drops such a
// block's clean pages first, so that they come back in base pages, and
// FetchForStores reads the pages a batch of stores needs together, at depth
// (storage/io/scattered_stores.h). Both are hints, kept apart from Store so that
// a caller overwriting a consecutive range prepares only the range's end
// blocks.
//
// Durability: stores reach the disk with the array's Sync() (the mapping is
// shared: an fsync of the file writes its dirty pages) or the kernel's
// write-back. Not thread-safe. REQUIRES of every index: index < length of the
// array at OpenStore (asserted).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "storage/io/fault_guard.h"
#include "storage/io/mapped_file.h"
#include "storage/io/scattered_stores.h"
#include "storage/util/status.h"

namespace momenta {

// Elements first..last (inclusive).
struct ElementRun {
  uint64_t first = 0;
  uint64_t last = 0;
};

class ArrayStore {
 public:
  ArrayStore(const ArrayStore&) = delete;
  ArrayStore& operator=(const ArrayStore&) = delete;

  const std::string& path() const { return map_->path(); }

  // Copies element `index`'s itemsize bytes into out.
  [[nodiscard]] Status Load(uint64_t index, char* out) const {
    if (GuardedCopy(out, Element(index), item_)) return Status::OK();
    return AccessFailed(index, /*writing=*/false);
  }
  // Stores itemsize bytes of `raw` as element `index`.
  [[nodiscard]] Status Store(uint64_t index, const char* raw) {
    if (GuardedCopy(Element(index), raw, item_)) return Status::OK();
    return AccessFailed(index, /*writing=*/true);
  }
  // Asks the CPU to bring element `index` into its cache, for a store soon
  // (a hint; never faults).
  void PrefetchElement(uint64_t index) const { __builtin_prefetch(Element(index), 1); }
  // Copies elements [first, first + count) into out (count * itemsize bytes),
  // reading the range's uncached pages ahead in one go first: the page cache
  // as it is, dirty pages included, with no write-back.
  [[nodiscard]] Status LoadRange(uint64_t first, uint64_t count, char* out) const;

  // Call before the first store into the 2 MiB block holding `index`
  // (idempotent; see above).
  void PrepareForStore(uint64_t index) { scattered_.Prepare(Offset(index)); }
  // Prepares the blocks of all of `indices` (stores to come) and starts
  // reading their uncached pages together, so that the stores' faults do not
  // read them one at a time (ScatteredStores::Fetch). A hint: it changes no
  // element.
  void FetchForStores(std::span<const uint64_t> indices);
  // The elements that share element `index`'s 4 KiB page of the file.
  ElementRun PageElements(uint64_t index) const {
    const uint64_t page_begin = Offset(index) / ScatteredStores::kPageBytes * ScatteredStores::kPageBytes;
    const uint64_t page_end = page_begin + ScatteredStores::kPageBytes;  // exclusive
    ElementRun run;
    run.first = page_begin <= data_offset_ ? 0 : (page_begin - data_offset_ + item_ - 1) / item_;
    run.last = std::min(length_ - 1, (page_end - 1 - data_offset_) / item_);
    return run;
  }

 private:
  friend class ArrayFile;  // OpenStore
  ArrayStore(std::unique_ptr<MappedFile> map, uint64_t data_offset, size_t itemsize, uint64_t length);

  uint64_t Offset(uint64_t index) const {
    assert(index < length_);
    return data_offset_ + index * item_;
  }
  char* Element(uint64_t index) const { return map_->data() + Offset(index); }
  // The Status for a guarded access to element `index` that faulted: ENOSPC
  // when the file system has no block left, else IOError "cannot read|write".
  Status AccessFailed(uint64_t index, bool writing) const;

  const std::unique_ptr<MappedFile> map_;  // the whole file, writable
  const uint64_t data_offset_;             // file offset of element 0
  const size_t item_;                      // bytes per element (<= 8)
  const uint64_t length_;                  // elements
  ScatteredStores scattered_;              // keeps map_'s cache in base pages where stores land
  std::vector<uint64_t> fetch_offsets_;    // FetchForStores' scratch
};

}  // namespace momenta
