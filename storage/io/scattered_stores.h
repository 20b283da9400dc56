// ScatteredStores: keeps the page cache under a writable mapping in base
// (4 KiB) pages where a writer stores single elements at scattered places,
// and reads the pages a batch of stores needs at depth, each once.
//
// Why base pages: the kernel caches file data in large folios (up to 2 MiB)
// after sequential reads or writes, by anyone. A store through a shared
// mapping dirties a whole folio and write-back then writes all of it: on ext4
// (kernel 6.18) one random 8-byte store into a sequentially read file wrote
// ~100 KiB; a pwrite dirties one block, but the whole folio counts as dirty
// and the writer is throttled (~40 us a write). In base pages, either costs
// one 4 KiB page written back per page touched.
//
// Why fetch: the mapping is advised MADV_RANDOM (a fault reads its one page,
// no readahead), so a store into an uncached page waits for one synchronous
// 4 KiB read — the device at depth 1. Fetch() starts the reads of every
// uncached page a batch will store into before the first store
// (POSIX_FADV_WILLNEED per run of adjacent pages, which fills base pages and
// returns once the reads are queued), so they go out together and the stores'
// faults find them read or in flight.
//
// How: before the first store into a 2 MiB block (the largest folio on
// x86-64) in this process's life, if any page of the block is cached, the
// block's clean pages are dropped (POSIX_FADV_DONTNEED); Fetch then reads back
// only the pages the stores need. The device reads at most 4 KiB per distinct
// page stored into (the floor for a page that is not cached), never the
// whole block. What the kernel will not drop (dirty pages, pages another
// process maps) keeps its folio: a reader mapping the array while a writer
// runs can keep a large folio alive, at the cost above.
//
// Dense blocks keep their folios: when one Fetch asks for at least a
// quarter of a block's pages (a hot set), its clean pages are not dropped.
// The block's folio is then written back whole, at most 4x the pages the
// stores dirty in that window alone and usually all of them, and the pages
// are not read again (a 64 MiB hot set was re-read by every writer).
//
// Resident blocks are not looked at again: once a block's every page is
// found cached, Fetch skips its offsets (no sort, no mincore) for the next
// kResidentWindows calls, then looks again. A page evicted meanwhile only
// costs its store a synchronous read.
//
// What is prepared is known to this object only: each writer process drops a
// cached block's clean pages before its first store into it, even when an
// earlier writer left it in base pages; the pages it then needs are read
// again, 4 KiB each. (A hint file kept across processes was tried and dropped:
// when a block's pages are evicted and read back sequentially by another
// program - a cache drop, then NumPy - nothing a process can observe tells
// large folios from base pages, and trusting the hint brought back the
// full-folio write-back it exists to prevent.) The cost: a warm block loses
// its clean cached pages for readers too, who read them again on demand.
//
// Space: one bit per 2 MiB of the file (64 KiB for 1 TiB). Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "storage/io/mapped_file.h"

namespace momenta {

class ScatteredStores {
 public:
  static constexpr uint64_t kBlockBytes = uint64_t{2} << 20;
  static constexpr uint64_t kPageBytes = 4096;
  // Fetch calls between two looks at a block found wholly resident.
  static constexpr uint64_t kResidentWindows = 256;

  // REQUIRES: `file` outlives this object.
  explicit ScatteredStores(MappedFile* file);

  // Call before storing at byte `offset` of the file.
  void Prepare(uint64_t offset) {
    const uint64_t block = offset / kBlockBytes;
    if (!((prepared_[block / 64] >> (block % 64)) & 1)) PrepareBlock(block);
  }

  // Prepares the block of every offset in `offsets` (byte offsets of stores
  // to come) and starts reading the uncached pages among them, in file
  // order. On return *offsets holds one of them per distinct page, sorted
  // (the first of its page). Best effort: a read that cannot start leaves
  // the page to its fault.
  void Fetch(std::vector<uint64_t>* offsets);

  // Blocks found cached whose clean pages were dropped, so far.
  uint64_t blocks_dropped() const { return blocks_dropped_; }
  // Pages Fetch found uncached and asked the kernel to read, so far.
  uint64_t pages_fetched() const { return pages_fetched_; }

 private:
  // `keep`: the block is dense in this batch; its folio is kept.
  void PrepareBlock(uint64_t block, bool keep = false);
  bool Resident(uint64_t block) const { return (resident_blocks_[block / 64] >> (block % 64)) & 1; }
  // Starts reading the uncached pages of `offsets` (sorted, one per page,
  // all within one block).
  void FetchInBlock(const uint64_t* offsets, size_t count);

  MappedFile* const file_;
  std::vector<uint64_t> prepared_;         // bit per block: prepared in this process
  std::vector<uint64_t> resident_blocks_;  // bit per block: every page cached when last looked at
  uint64_t fetches_ = 0;                   // Fetch calls since resident_blocks_ was last cleared
  std::vector<unsigned char> resident_;    // scratch for mincore
  uint64_t blocks_dropped_ = 0;
  uint64_t pages_fetched_ = 0;
};

}  // namespace momenta
