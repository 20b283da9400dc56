// Lines of a file or of stdin, for commands that answer each line as it
// arrives (`momenta query --ranges -`): a script can keep one process open
// and write a line whenever it wants an answer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "storage/util/status.h"

namespace momenta::cli {

class LineInput {
 public:
  // "-" is stdin (named "stdin" in errors). A folder or an unreadable file is
  // an IO error naming it.
  static Result<std::unique_ptr<LineInput>> Open(const std::string& path);
  LineInput(const LineInput&) = delete;
  LineInput& operator=(const LineInput&) = delete;
  ~LineInput();

  // The next line without its "\n" (a last line without one counts too), or
  // nullopt at the end of the input. Blocks until a whole line has arrived;
  // a signal (storage/util/cancel.h) while waiting is Interrupted.
  Result<std::optional<std::string>> Next();
  // True when Next() would not wait: a whole line (or the end) is buffered,
  // or the descriptor has bytes ready now (always, for a regular file).
  bool Ready();
  // Waits up to timeout_ms (>= 0) for Next() not to wait: true when it would
  // not, false when the time ran out first. A signal (storage/util/cancel.h) while
  // waiting is Interrupted.
  Result<bool> WaitReady(int64_t timeout_ms);
  // "stdin" or the path.
  const std::string& name() const { return name_; }
  // The number of the line Next() returned last, from 1.
  uint64_t line_number() const { return line_number_; }

 private:
  LineInput(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}
  // A whole line, or the end, is in buffer_: Next() returns without reading.
  bool Buffered() const;
  // Reads once more into buffer_ (sets eof_ at the end).
  [[nodiscard]] Status Fill();

  const int fd_;
  const bool owned_;
  const std::string name_;
  std::string buffer_;  // bytes read, not yet returned, from buffer_at_
  size_t buffer_at_ = 0;
  bool eof_ = false;
  uint64_t line_number_ = 0;
};

}  // namespace momenta::cli
