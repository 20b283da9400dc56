// Log retention (--retain): which whole segments of the update log may go.
//
// A segment is dropped when both hold:
//  - recovery no longer needs it: its last record (the next segment's first
//    sequence − 1) is at or before the buffer's checkpoint;
//  - it is older than the window, judged by the next segment's first
//    record: its time < cutoff_ms (records stamped by the wall clock come in
//    time order, so this segment's are older still).
// The newest segment is never dropped. Segments go oldest first: the first
// one that must stay keeps every later one.
#pragma once

#include <cstdint>

#include "storage/log/log_writer.h"
#include "storage/util/status.h"

namespace momenta {

// Drops the segments of `log` that the rules above allow, given the buffer's
// checkpoint sequence and the cutoff time (ms since the epoch).
[[nodiscard]] Status DropExpiredLogSegments(LogWriter& log, uint64_t checkpoint_sequence, int64_t cutoff_ms);

}  // namespace momenta
