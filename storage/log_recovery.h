// RecoverLog: the writer's scan of the update log at open. It finds the last
// valid record and cuts a torn tail, with the damage rules of log_reader.h
// (which reports what readers meet; this cuts what only a writer may).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/dtype.h"
#include "storage/log_damage.h"
#include "storage/status.h"

namespace momenta {

// What RecoverLog found and did.
struct LogRecovery {
  uint64_t next_sequence = 0;      // the sequence after the last valid record; 0: no segment
  std::string active_segment;      // the newest segment, to append to; empty: start a new one
  uint64_t active_end = 0;         // its size after the cut
  std::optional<DType> dtype;      // from the newest readable segment header
  uint64_t array_tag = 0;
  std::vector<LogDamage> damage;   // damage found in the segments scanned
  uint64_t bytes_cut = 0;
};

// The writer's recovery scan. Scans the newest segment and cuts (truncates,
// then syncs) a torn or corrupt tail after its last valid frame; damage in the
// middle stays and is reported (readers skip it). A newest segment with no
// valid frame and an unusable header (empty, or cut short by a machine crash)
// is removed, and the one before it scanned instead. Older segments are not
// scanned: they were complete when the writer moved on, and readers report
// any damage there. REQUIRES: the caller holds the log's writer lock.
Result<LogRecovery> RecoverLog(const std::string& log_dir);

}  // namespace momenta
