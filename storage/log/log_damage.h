// LogDamage: what a reader or the writer's recovery reports about bytes of
// the update log that hold no valid frame, and about valid records out of
// place (see log_reader.h for the rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace momenta {

// Bytes of the log that hold no valid frame, and what they cost.
struct LogDamage {
  enum class Kind {
    kTornTail,         // invalid bytes up to the end of a segment (a crash mid-append)
    kCorruptFrames,    // invalid bytes followed by a valid frame of the same segment
    kBadSegment,       // a segment whose header is unusable: all of it skipped
    kMissingRecords,   // a sequence gap with no damaged bytes (a segment removed or cut)
    kMissingEnd,       // the log ends below the high-water mark (or the caller's minimum):
                       // its newest records are gone (segment = the newest segment or the folder)
    kBadMark,          // the high-water mark is unreadable (segment = the mark's path)
    kUnusedSequences,  // recovery only: sequences reserved by a writer on an earlier boot
                       // that left no record; never handed out again (first_lost.., records_lost)
    kOutOfPlace,       // valid records whose sequence is at or below one read before them (a
                       // frame written twice, frames swapped): skipped, kept in the file, never
                       // cut; nothing lost by them (first_skipped.., records_skipped, after)
  };
  Kind kind = Kind::kTornTail;
  std::string segment;  // the file's path
  uint64_t offset = 0;  // first damaged byte
  uint64_t bytes = 0;   // damaged bytes skipped (or cut)
  bool cut = false;     // RecoverLog truncated them away
  std::string problem;  // why the first bad frame (or the header) was refused
  // Records lost, when known: from the sequence gap up to the next valid
  // frame (filled in when a reader reaches it), else from the damaged frame's
  // own header. first_lost is meaningful when records_lost is set and > 0.
  std::optional<uint64_t> records_lost;
  uint64_t first_lost = 0;
  // kOutOfPlace: records [first_skipped, first_skipped + records_skipped) met
  // at `offset` after sequence `after` had been read; `returned`: the reader
  // returned them anyway (LogReaderOptions::out_of_order: never read before).
  uint64_t first_skipped = 0, records_skipped = 0, after = 0;
  bool returned = false;
  // One line, e.g. "<segment>: torn tail of 37 bytes at offset 1104 cut (frame
  // of 56 bytes runs past the end of the file); 1 record lost (sequence 27)".
  std::string ToString() const;
};

}  // namespace momenta
