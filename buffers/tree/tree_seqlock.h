// What the tree's readers and writers share about its header: the seqlock that
// makes a read consistent, the options a header records, and whether the
// array still holds what the tree describes. Not part of the API.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "buffers/tree/moment_tree.h"
#include "buffers/tree/tree_build.h"
#include "storage/array/array_file.h"

namespace momenta {

// The tree options recorded in a header (to rebuild with the same ones).
TreeOptions OptionsOfHeader(const TreeFileHeader& h);

// Whether the array file still holds the bytes the buffer describes: the same
// file (device, inode) with the same size and modification time. The change
// time is not compared: chmod, chown and new hard links move it without
// touching a byte. (A program that writes the file and then sets its
// modification time back goes unseen: run `momenta build` after one.)
inline bool SameContents(const ArrayIdentity& recorded, const ArrayIdentity& now) {
  return recorded.device == now.device && recorded.inode == now.inode && recorded.size == now.size &&
         recorded.mtime_ns == now.mtime_ns;
}

// The seqlock on the buffer header: write_epoch is odd while a writer
// changes the array or the nodes, even when they are consistent (readers
// retry a query until it saw the same even value before and after).
inline std::atomic_ref<uint64_t> Epoch(TreeFileHeader& h) { return std::atomic_ref<uint64_t>(h.write_epoch); }
// A reader that keeps losing the race asks writers to pause until this time
// (MonotonicNs) at their next chunk, for at most kReaderWaitNs.
inline std::atomic_ref<int64_t> ReaderWait(TreeFileHeader& h) {
  return std::atomic_ref<int64_t>(h.reader_wait_until_ns);
}
inline constexpr int64_t kReaderWaitNs = 20'000'000;

inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// read() taken between two equal, even values of h's seqlock (no writer's
// chunk ran meanwhile: what it read describes one state), retried with short
// sleeps; IOError naming `path` once a writer has kept changing the buffer
// for patience_ns. read returns a Result<T> or a Status.
template <class Read>
auto UnderSeqlock(TreeFileHeader& h, const std::string& path, int64_t patience_ns, Read&& read) -> decltype(read()) {
  const int64_t give_up = MonotonicNs() + patience_ns;
  for (int attempt = 0;; ++attempt) {
    const uint64_t before = Epoch(h).load(std::memory_order_acquire);
    if (before % 2 == 0) {
      auto result = read();
      std::atomic_thread_fence(std::memory_order_acquire);
      if (Epoch(h).load(std::memory_order_acquire) == before) return result;
    }
    if (MonotonicNs() > give_up)
      return Status::IOError(path, "a writer kept changing the moment buffer for " +
                                       std::to_string(patience_ns / 1'000'000'000) + " s: no consistent read");
    std::this_thread::sleep_for(std::chrono::microseconds(attempt < 2 ? 50 : 500));
  }
}

// A log record's raw element bytes (LogRecord::old_raw, new_raw), as stored.
inline const char* RawBytes(const uint64_t& raw) { return reinterpret_cast<const char*>(&raw); }

namespace internal {

// Creates a tree file at `path` for `array`, fills it from the array and
// marks it clean with the array's current identity and `log_sequence`.
Result<std::unique_ptr<MomentTree>> BuildTreeFile(const std::string& path, ArrayFile& array, const TreeOptions& options,
                                                  const IoOptions& io, const BuildProgress& progress, BuildStats* stats,
                                                  uint64_t log_sequence = 0);

}  // namespace internal
}  // namespace momenta
