// ScatteredStores: keeps the page cache under a writable mapping in base
// (4 KiB) pages where a writer stores single elements at scattered places.
//
// Why: the kernel caches file data in large folios (up to 2 MiB) after
// sequential reads or writes, by anyone. A store through a shared mapping
// dirties a whole folio and write-back then writes all of it: on ext4 (kernel
// 6.18) one random 8-byte store into a sequentially read file wrote ~100 KiB;
// a pwrite dirties one block, but the whole folio counts as dirty and the
// writer is throttled (~40 us a write). In base pages, either costs one
// 4 KiB page written back per page touched.
//
// How: before the first store into a 2 MiB block (the largest folio on
// x86-64) in this process's life, if any page of the block is cached, the
// block's clean pages are dropped (POSIX_FADV_DONTNEED) and read back
// asynchronously (POSIX_FADV_WILLNEED, which fills base pages), so the block
// stays warm. The mapping is advised MADV_RANDOM, so faults read single pages.
// What the kernel will not drop (dirty pages, pages another process maps)
// keeps its folio: a reader mapping the array while a writer runs can keep a
// large folio alive, at the cost above.
//
// What is prepared is known to this object only: each writer process re-reads
// a cached block before its first store into it, even when an earlier writer
// left it in base pages. (A hint file kept across processes was tried and
// dropped: when a block's pages are evicted and read back sequentially by
// another program - a cache drop, then NumPy - nothing a process can observe
// tells large folios from base pages, and trusting the hint brought back the
// full-folio write-back it exists to prevent. A re-read costs at most 2 MiB
// per block touched; the write-back it prevents, up to 2 MiB per store.)
//
// Space: one bit per 2 MiB of the file (64 KiB for 1 TiB). Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "storage/mapped_file.h"

namespace momenta {

class ScatteredStores {
 public:
  static constexpr uint64_t kBlockBytes = uint64_t{2} << 20;

  // REQUIRES: `file` outlives this object.
  explicit ScatteredStores(MappedFile* file);

  // Call before storing at byte `offset` of the file.
  void Prepare(uint64_t offset) {
    const uint64_t block = offset / kBlockBytes;
    if (!((prepared_[block / 64] >> (block % 64)) & 1)) PrepareBlock(block);
  }

  // Blocks found cached and re-read in base pages so far.
  uint64_t blocks_recached() const { return blocks_recached_; }

 private:
  void PrepareBlock(uint64_t block);

  MappedFile* const file_;
  std::vector<uint64_t> prepared_;  // bit per block: prepared in this process
  uint64_t blocks_recached_ = 0;
};

}  // namespace momenta
