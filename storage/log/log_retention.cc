#include "storage/log/log_retention.h"

#include "storage/log/log_reader.h"
#include "storage/log/log_segments.h"

namespace momenta {

Status DropExpiredLogSegments(LogWriter& log, uint64_t checkpoint_sequence, int64_t cutoff_ms) {
  auto segments = ListLogSegments(log.dir());
  if (!segments.ok()) return segments.status();
  uint64_t keep_from = 0;
  for (size_t i = 0; i + 1 < segments->size(); ++i) {
    const uint64_t next_first = (*segments)[i + 1].first_sequence;
    if (next_first - 1 > checkpoint_sequence) break;  // recovery may still need it
    LogReaderOptions ro;
    ro.from_sequence = next_first;
    auto reader = LogReader::Open(log.dir(), ro);
    if (!reader.ok()) return reader.status();
    LogRecord first;
    auto more = (*reader)->Next(&first);
    if (!more.ok()) return more.status();
    if (!*more || first.time >= cutoff_ms) break;  // this segment may hold records inside the window
    keep_from = next_first;
  }
  if (keep_from == 0) return Status::OK();
  auto dropped = log.DropSegmentsBefore(keep_from);
  return dropped.status();
}

}  // namespace momenta
