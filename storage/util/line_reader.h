// Lines of a file, a pipe or stdin, read in 64 KiB chunks, waiting with
// poll(2) beside a stop token's descriptor so that a stop wakes a blocked
// wait. The one line reader of the project: the monitor's text input
// (stream/drive/text_source.h) and the CLI's commands that answer each line
// as it arrives (`momenta query --ranges -`, `momenta update --follow`: a
// script keeps one process open and writes a line whenever it wants).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "storage/util/status.h"
#include "storage/util/stop_token.h"

namespace momenta {

class LineReader {
 public:
  enum class Got { kLine, kNothing, kEnd };
  // "-" is stdin (named "stdin" in errors). A folder or an unreadable file is
  // an IO error naming it.
  static Result<std::unique_ptr<LineReader>> Open(const std::string& path, StopToken stop);
  // Owns `fd` (closed unless it is stdin, fd 0); `name` names it in errors.
  LineReader(int fd, std::string name, StopToken stop) : fd_(fd), name_(std::move(name)), stop_(stop) {}
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // kLine: *line is the next line without its "\n" (a last line without one
  // counts too), valid until the next call. kNothing: no whole line within
  // `wait`, or a stop came. kEnd: the input is over. wait < 0: as long as it takes.
  Result<Got> Next(std::string_view* line, std::chrono::milliseconds wait);
  // The next line, or nullopt at the end of the input. Blocks until a whole
  // line has arrived; a stop while waiting is Interrupted (StopToken::Check).
  Result<std::optional<std::string>> Next();
  // True when Next() would not wait: a whole line (or the end) is buffered,
  // or the descriptor has bytes ready now (always, for a regular file).
  bool Ready();
  // Waits up to timeout_ms (>= 0) for Next() not to wait: true when it would
  // not, false when the time ran out first. A stop while waiting is Interrupted.
  Result<bool> WaitReady(int64_t timeout_ms);

  // "NAME:LINE" of the line Next gave last, for messages.
  std::string where() const { return name_ + ":" + std::to_string(line_); }
  // "stdin" or the path.
  const std::string& name() const { return name_; }
  // The number of the line Next gave last, from 1.
  uint64_t line_number() const { return line_; }
  bool finished() const { return eof_ && pos_ >= buf_.size(); }

 private:
  // A whole line, or the end, is in buf_: Next returns without reading.
  bool Buffered() const { return eof_ || buf_.find('\n', pos_) != std::string::npos; }
  // The next buffered line into *line, if Buffered() and one is left.
  bool TakeLine(std::string_view* line);
  // Waits up to `wait_ms` (< 0: no limit) for bytes or a stop, then reads once
  // into buf_ (sets eof_ at the end). False: nothing was read (the time ran
  // out, a stop came, or a signal interrupted the wait).
  Result<bool> Fill(int wait_ms);

  const int fd_;
  const std::string name_;
  const StopToken stop_;
  std::string buf_;
  size_t pos_ = 0;  // buf_[0, pos_) was handed out already
  uint64_t line_ = 0;
  bool eof_ = false;
};

}  // namespace momenta
