// Coalescing a batch of reads of one file: requests whose byte ranges overlap
// or touch become one device read. Adjacent ranges of a batch (the bins of an
// overview, `momenta query --bins`) read the two sides of the same leaf;
// coalesced, each leaf is read once, and a batch of short ranges close
// together costs a few large reads instead of many small ones.
//
// Every group reads into one arena the caller provides (ReadArena: reused
// from batch to batch, so no batch pays for fresh pages), and each request's
// bytes are then found in place (Where): nothing is copied. Groups start at
// the smallest offset of their members and sit at page-aligned places of the
// arena, so page-aligned requests stay eligible for O_DIRECT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "storage/io/io_backend.h"

namespace momenta {

// Page-aligned scratch memory that keeps its largest size between uses.
// Not thread-safe: one per query thread.
class ReadArena {
 public:
  ReadArena() = default;
  ReadArena(const ReadArena&) = delete;
  ReadArena& operator=(const ReadArena&) = delete;
  // At least `bytes` bytes at a 4096-byte boundary, valid until the next
  // Reserve; null when the memory cannot be had.
  char* Reserve(size_t bytes);

 private:
  struct FreeDeleter {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, FreeDeleter> memory_;
  size_t capacity_ = 0;
};

class CoalescedReads {
 public:
  // Groups `requests` (their `dest` is ignored): sorted by offset, a request
  // joins the group before it when it starts at or before that group's end
  // and the group would not grow past max_bytes.
  explicit CoalescedReads(std::span<const ReadRequest> requests, size_t max_bytes = size_t{4} << 20);

  // The arena bytes the groups need (each rounded up to a page).
  size_t bytes() const { return bytes_; }
  // Gives each group its place in `arena` (4096-aligned, at least bytes()
  // long); then reads() may be read.
  void Place(char* arena);
  // What goes to the device: one request per group.
  std::span<const ReadRequest> reads() const { return reads_; }
  // Once reads() were read: where the bytes of requests[k] are (empty
  // requests: null).
  const char* Where(size_t k) const;

 private:
  struct Member {
    size_t group = SIZE_MAX;  // index in reads_; SIZE_MAX for an empty request
    uint64_t at = 0;          // request offset - group offset
  };
  std::vector<ReadRequest> reads_;
  std::vector<size_t> places_;   // arena offset of each group
  std::vector<Member> members_;  // one per request given
  size_t bytes_ = 0;
};

}  // namespace momenta
