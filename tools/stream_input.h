// What `momenta window` and `momenta site` share: durations with units
// (ParseDuration, cli_parse.h), the wall clock in ms, and where stream items
// come from (an array's update log).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "storage/log_reader.h"
#include "storage/status.h"
#include "stream/window/item_mapping.h"
#include "tools/cli_parse.h"

namespace momenta::cli {

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
// in the log is printed as a notice and skipped. Following, a wait ends
// early (false) when a stop signal came.
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

// Two times of the log in `log_dir`, read from two segments however long
// the log is: its first record's, and the largest in its newest segment
// (nullopt: no records). Where a site started on a long log begins (RunSite).
struct LogTimes {
  std::optional<int64_t> first, newest;
};
Result<LogTimes> ReadLogTimes(const std::string& log_dir);

// Lines from a file or a pipe, read in 64 KiB chunks; owns `fd` (closed
// unless it is stdin). The last line may lack its newline.
class LineBuffer {
 public:
  enum class Got { kLine, kNothing, kEnd };
  LineBuffer(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ~LineBuffer();
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;

  // kLine: *line is the next line (valid until the next call). kNothing: no
  // whole line within `wait`, or a stop signal came (stop_signals.h: its
  // self-pipe is polled beside the input). kEnd: the input is over. wait < 0:
  // wait for as long as it takes.
  Result<Got> Next(std::string_view* line, std::chrono::milliseconds wait);
  // "NAME:LINE" of the line Next gave last, for messages.
  std::string where() const { return name_ + ":" + std::to_string(line_); }
  const std::string& name() const { return name_; }
  uint64_t line_number() const { return line_; }
  bool finished() const { return eof_ && pos_ >= buf_.size(); }

 private:
  const int fd_;
  const std::string name_;
  std::string buf_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
  bool eof_ = false;
};

}  // namespace momenta::cli
