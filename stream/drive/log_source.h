// An array's update log as a source of items (storage/log/log_reader.h): the
// item is the updated index (or its region), or the new value on a grid;
// values with no cell (NaN) are skipped and counted. Damage met in the log is
// told as a notice and skipped.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "storage/log/log_reader.h"
#include "storage/util/stop_token.h"
#include "stream/drive/item_source.h"
#include "stream/window/item_mapping.h"

namespace momenta {

class LogSource : public ItemSource {
 public:
  // The log in `log_dir` (an array's sidecar + "/log"). Following, Next waits
  // up to its `wait` for new records (kNothing when none came, or a stop,
  // seen within 100 ms); not following, the log's end is kEnd.
  static Result<std::unique_ptr<LogSource>> Open(const std::string& log_dir, ItemMapping mapping, bool follow,
                                                 StopToken stop, NoticeFn notice);
  Result<Got> Next(TimedItem* out, std::chrono::milliseconds wait) override;
  // Reads on from the first record stamped at or after `since` instead (the
  // records before it are never read).
  Status StartAt(int64_t since);
  const std::string& log_dir() const { return log_dir_; }
  // Updates skipped so far because their value has no cell on the grid.
  uint64_t skipped() const { return skipped_; }

 private:
  LogSource(std::string log_dir, std::unique_ptr<LogReader> reader, ItemMapping mapping, bool follow, StopToken stop,
            NoticeFn notice);
  Result<bool> NextRecord(LogRecord* r, std::chrono::milliseconds wait);

  const std::string log_dir_;
  std::unique_ptr<LogReader> reader_;
  const ItemMapping mapping_;
  const bool follow_;
  const StopToken stop_;
  const NoticeFn notice_;
  size_t damage_seen_ = 0;  // reader_->damage()[0, damage_seen_) was told
  uint64_t skipped_ = 0;
};

// Two times of the log in `log_dir`, read from two segments however long
// the log is: its first record's, and the largest in its newest segment
// (nullopt: no records). Where a site started on a long log begins.
struct LogTimes {
  std::optional<int64_t> first, newest;
};
Result<LogTimes> ReadLogTimes(const std::string& log_dir);

}  // namespace momenta
