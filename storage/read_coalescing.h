// Coalescing a batch of reads of one file: requests whose byte ranges overlap
// or touch become one device read into a scratch buffer, whose bytes are then
// copied to each request's destination. Adjacent ranges of a batch (the bins
// of an overview, `momenta query --bins`) read the two sides of the same leaf;
// coalesced, each leaf is read once, and a batch of short ranges close
// together costs a few large reads instead of many small ones.
//
// Merged reads start at the smallest offset of their group and their buffers
// are page-aligned, so page-aligned requests stay eligible for O_DIRECT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "storage/io_backend.h"

namespace momenta {

class CoalescedReads {
 public:
  // Groups `requests` (which must stay alive and unchanged until Scatter):
  // sorted by offset, a request joins the group before it when it starts at
  // or before that group's end and the group would not grow past max_bytes.
  // A group of one keeps its request as it is (no copy).
  CoalescedReads(std::span<const ReadRequest> requests, size_t max_bytes = size_t{4} << 20);
  CoalescedReads(const CoalescedReads&) = delete;
  CoalescedReads& operator=(const CoalescedReads&) = delete;

  // What goes to the device: one request per group.
  std::span<const ReadRequest> reads() const { return reads_; }
  // After reads() were read: copies each merged group's bytes to its members.
  void Scatter() const;
  // False when a scratch buffer could not be allocated (then reads() is empty).
  bool ok() const { return ok_; }

 private:
  struct Member {
    size_t request;    // index in the requests given
    size_t group;      // index in reads_
    uint64_t at;       // request offset - group offset
  };
  struct FreeDeleter {
    void operator()(char* p) const;
  };

  std::span<const ReadRequest> requests_;
  std::vector<ReadRequest> reads_;
  std::vector<Member> members_;  // requests of merged groups only
  std::vector<std::unique_ptr<char, FreeDeleter>> scratch_;
  bool ok_ = true;
};

}  // namespace momenta
