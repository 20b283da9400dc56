// RecoverLog: the writer's scan of the update log at open. It finds the last
// valid record, cuts a torn tail, and reports every loss it can see, with the
// damage rules of log_reader.h (which reports what readers meet; this cuts
// what only a writer may).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/log/log_damage.h"
#include "storage/log/log_mark.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

struct LogRecoveryOptions {
  uint64_t first_sequence = 1;  // the first sequence of an empty log
  // 0: none. Else the next sequence is at least this, and a log ending below
  // min_next_sequence - 1 has lost [last + 1, min_next_sequence - 1] (e.g. the
  // caller's checkpoint reflects records the log no longer holds).
  uint64_t min_next_sequence = 0;
  // false: change no file (the recovery a read-only opener such as a query
  // runs to bring the buffer up to date): a torn tail, and a newest segment
  // with nothing valid, are reported and left for the next writer that cuts;
  // a writer opened so appends to a new segment.
  bool cut = true;
};

// What RecoverLog found and did.
struct LogRecovery {
  uint64_t next_sequence = 0;  // the sequence the writer hands out next
  uint64_t last_sequence = 0;  // the last valid record's (0: none)
  std::string active_segment;  // the newest segment, to append to; empty: start a new one
  uint64_t active_end = 0;     // its size after the cut
  std::optional<DType> dtype;  // from the newest readable segment header
  uint64_t array_tag = 0;
  std::optional<LogMark> mark;  // the high-water mark as found (nullopt: none or unreadable)
  bool mark_unreadable = false;
  std::vector<LogDamage> damage;  // every loss found, in log order
  uint64_t bytes_cut = 0;
};

// The writer's recovery scan:
//  - the newest segment is scanned whole; a torn tail (bytes after its last
//    whole, valid frame, holding no whole valid frame) is cut (truncated,
//    then synced); damage in the middle stays and is reported (readers skip
//    it). A whole valid frame is never cut, even one out of place (written
//    twice, or behind a later frame): its records are reported (kOutOfPlace,
//    with sequences and offset), skipped, and kept. A newest segment with no
//    whole frame and an unusable header (empty, or cut short by a machine
//    crash) is removed, and the one before it scanned instead.
//  - each older segment is checked cheaply: its header, and its last frame
//    (read from the end) against the first sequence of the next segment, so a
//    removed, emptied or cut segment is a reported gap [first lost, last lost];
//    a segment whose end is no valid frame, or disagrees with the next
//    segment's start, is scanned whole. (A corrupt frame
//    in the middle of an older segment is left to readers to report.) The
//    next sequence is above every older segment's last record too, so
//    overlapping segments (a damaged folder) never make a sequence reused;
//    a valid frame in the middle of an older segment above the frame it ends
//    with is not looked for.
//  - the high-water mark (log_mark.h): a log ending below it has lost its
//    newest records (kMissingEnd). After a crash of the machine (the mark was
//    written on another boot), the sequences it reserved are skipped
//    (kUnusedSequences): a record may have been read before it was lost.
// Changes nothing but the cut and the removal, each reported (cut = true);
// with options.cut false, nothing at all.
// REQUIRES: the caller holds the log's writer lock.
Result<LogRecovery> RecoverLog(const std::string& log_dir, const LogRecoveryOptions& options = {});

}  // namespace momenta
