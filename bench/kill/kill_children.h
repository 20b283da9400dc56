// The two processes of a writer round of the kill driver: the writer, which
// the driver SIGKILLs, and a reader querying the same array meanwhile. Both
// are forked children reporting over a pipe (kill_util.h Event).
#pragma once

#include <cstdint>
#include <string>

#include "bench/kill/kill_model.h"
#include "buffers/buffered_array.h"

namespace momenta::kill {

// What the children say. a, b, c as noted.
enum EventKind : uint32_t {
  kOpening = 1,    // a writer Open (recovery included) begins; a = 1 after its own checkpoint
  kOpened,         // it returned: a = applied_sequence(), b = its duration in µs, c = records replayed
  kIntent,         // an Apply of updates through a begins
  kAcked,          // that Apply returned OK: updates through a are acknowledged
  kCommitting,     // a Commit begins
  kCommitted,      // it returned OK
  kCheckpointing,  // a Close (the checkpoint: array and buffer synced, log pruned) begins
  kAnswer,         // a reader's answer: a = p | q << 32, b = Σ a_i (int64 bits), c = its log sequence
  kChildError,     // a child failed (its message went to stderr); a = where
};

// The array's options, the same for the writer, the reader and the driver's
// own reopen: small buffer nodes (several levels over 64 Ki elements), small
// log segments (rotation every few hundred records), and retention 0 (each
// checkpoint deletes the segments it no longer needs).
BufferedArrayOptions KillArrayOptions(LogSync sync, bool writable);

// Opens `path` as a writer, retrying while another process holds the lock
// (a reader doing a dead writer's recovery) for up to `wait_ms`.
Result<std::unique_ptr<BufferedArray>> OpenWriter(const std::string& path, LogSync sync, int wait_ms,
                                                  std::vector<std::string>* notices = nullptr);

// The writer: opens (recovering what the last one left), then applies the
// stream from update applied_sequence() + 1 on, in batches of 1..6000
// (mostly small), committing every 1..6 batches and checkpointing (Close,
// then Open again) every 2..13, sending events to `fd` as it goes.
// Never returns: runs until killed (or _exits with a code > 2 on an error).
[[noreturn]] void RunWriterChild(const std::string& path, LogSync sync, const UpdateStream& stream, uint64_t seed,
                                 int fd);

// The reader: opens `path` read-only and answers random range sums (small
// ranges over the hot range, and ranges anywhere) as fast as the writer
// lets it, sending each answer with its log sequence to `fd`, until
// `control_fd` reaches end of file; then two more queries, and _exit(0).
[[noreturn]] void RunReaderChild(const std::string& path, LogSync sync, const UpdateStream& stream, uint64_t seed,
                                 int fd, int control_fd);

}  // namespace momenta::kill
