// What `momenta window` and `momenta site` share: durations with units, the
// wall clock in ms, and where stream items come from (an array's update log).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "storage/log_reader.h"
#include "storage/status.h"
#include "stream/item_mapping.h"

namespace momenta::cli {

// "5000", or with a unit for millisecond clocks: "250ms", "10s", "5m", "2h", "1d".
Result<int64_t> ParseDuration(const std::string& text, const char* flag);

int64_t WallMillis();

// Where items come from: Next gives the next (timestamp, item) or false at
// the end (for a live source: none within `wait`).
class Source {
 public:
  virtual ~Source() = default;
  virtual Result<bool> Next(int64_t* ts, int64_t* item, std::chrono::milliseconds wait) = 0;
};

// An array's update log: the item is the updated index (or its region), or
// the new value on a grid; values with no cell (NaN) are skipped. Damage met
// in the log is printed as a notice and skipped.
class LogSource : public Source {
 public:
  LogSource(std::unique_ptr<LogReader> reader, ItemMapping mapping, bool follow)
      : reader_(std::move(reader)), mapping_(mapping), follow_(follow) {}
  Result<bool> Next(int64_t* ts, int64_t* item, std::chrono::milliseconds wait) override;
  uint64_t skipped() const { return skipped_; }

 private:
  std::unique_ptr<LogReader> reader_;
  ItemMapping mapping_;
  bool follow_;
  size_t damage_seen_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace momenta::cli
