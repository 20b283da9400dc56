// A record of the reads an I/O backend hands the kernel, for benchmarks that
// replay a query's reads through another tool (bench/serving's fio replay)
// and count its device rounds. Off unless a ReadLog is installed on the
// calling thread; then the io_uring backend appends every SQE it queues
// (after coalescing, as submitted: a short read's remainder is a read of its
// own), numbers each ReadBatch as one round and counts its waits for
// completions (io_uring_enter calls). Reads the page cache answers
// without the ring (IoOptions::cache_first) never reach it and are not logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace momenta {

struct LoggedRead {
  std::string path;  // the backend's path
  uint64_t offset = 0;
  size_t length = 0;
  bool direct = false;  // through the O_DIRECT descriptor, else the page cache
  uint64_t round = 0;   // reads of one ReadBatch (in flight together) share it
};

// Installs itself as the calling thread's log until destroyed (nesting
// restores the outer one). Not shared between threads.
class ReadLog {
 public:
  ReadLog();
  ~ReadLog();
  ReadLog(const ReadLog&) = delete;
  ReadLog& operator=(const ReadLog&) = delete;

  // The calling thread's installed log, or null (the common case: one
  // thread-local load per read).
  static ReadLog* Current();

  // A new round: the reads logged next were submitted together.
  void NextRound() { ++round_; }
  void Add(const std::string& path, uint64_t offset, size_t length, bool direct) {
    reads_.push_back({path, offset, length, direct, round_});
  }
  // The backend entered the kernel to wait for completions.
  void AddWait() { ++waits_; }
  const std::vector<LoggedRead>& reads() const { return reads_; }
  // Waits so far: a batch no deeper than the ring's window takes one (a
  // short read or a retry, another).
  uint64_t waits() const { return waits_; }
  // Distinct rounds among the logged reads.
  uint64_t rounds() const;
  void Clear() {
    reads_.clear();
    waits_ = 0;
  }

 private:
  std::vector<LoggedRead> reads_;
  uint64_t round_ = 0;
  uint64_t waits_ = 0;
  ReadLog* outer_;
};

}  // namespace momenta
