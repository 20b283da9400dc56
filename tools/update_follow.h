// momenta update --follow: 'INDEX VALUE [TIME]' lines applied as they
// arrive, in group commits.
//
// A group opens with the first line that arrives after the last group closed
// and closes when `max_delay_ms` has passed since that line arrived or when it
// holds `group` updates, whichever comes first (and at the end of the input).
// Closing it is one Apply and one Commit: readers see the group's updates once
// it is applied, and after the Commit it is durable per the array's sync
// policy (`always`: its log frames were fdatasync'ed before they applied;
// `batch`: the Commit syncs the log; `none`: in the page cache only). With
// `ack`, one line per closed group then goes to stdout and is flushed: "SEQ
// COUNT" (with `json`, {"seq": S, "count": C}), SEQ the last log sequence
// applied so far and COUNT the group's updates, so a producer knows exactly
// what survives a crash of this process (all of it, under always and batch).
//
// A line's time is its TIME field, else `time` (--time), else the wall clock
// when the line was read. A bad line is reported with its number: with
// `skip_bad` it is skipped and the stream goes on; otherwise the group
// before it closes (applied, committed, acknowledged) and the command fails.
#pragma once

#include <cstddef>
#include <cstdint>

#include "buffers/buffered_array.h"
#include "storage/util/line_reader.h"

namespace momenta::cli {

struct FollowOptions {
  int64_t max_delay_ms = 10;
  size_t group = 65536;
  bool ack = false;
  bool json = false;
  bool skip_bad = false;
  int64_t time = kLogTimeNow;  // kLogTimeNow: each line's arrival on the wall clock
};

// What a follow run did, for its summary line.
struct FollowStats {
  uint64_t updates = 0;  // applied
  uint64_t groups = 0;   // closed (each applied and committed)
  uint64_t skipped = 0;  // bad lines skipped
};

// Runs until the input ends (OK), a bad line without skip_bad
// (InvalidArgument / OutOfRange naming the input and line; the group before
// it is closed first), a stop signal (Interrupted: the open group is not
// applied, or only its head, and not acknowledged; the status says how much)
// or a failed Apply or Commit. *stats counts what was done either way.
// Acknowledged groups stay; an unacknowledged line may or may not have been
// applied (an update sets a value, so sending it again is harmless).
[[nodiscard]] Status FollowUpdates(BufferedArray& ba, LineReader& in, const FollowOptions& options, FollowStats* stats);

}  // namespace momenta::cli
