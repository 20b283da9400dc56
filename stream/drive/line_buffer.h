// Lines from a file or a pipe, read in 64 KiB chunks, waiting with poll(2)
// beside a stop token's descriptor so that a stop wakes a blocked wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"
#include "stream/drive/stop_token.h"

namespace momenta {

// Owns `fd` (closed unless it is stdin, fd 0). The last line may lack its newline.
class LineBuffer {
 public:
  enum class Got { kLine, kNothing, kEnd };
  LineBuffer(int fd, std::string name, StopToken stop) : fd_(fd), name_(std::move(name)), stop_(stop) {}
  ~LineBuffer();
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;

  // kLine: *line is the next line (valid until the next call). kNothing: no
  // whole line within `wait`, or a stop came. kEnd: the input is over.
  // wait < 0: wait for as long as it takes.
  Result<Got> Next(std::string_view* line, std::chrono::milliseconds wait);
  // "NAME:LINE" of the line Next gave last, for messages.
  std::string where() const { return name_ + ":" + std::to_string(line_); }
  const std::string& name() const { return name_; }
  uint64_t line_number() const { return line_; }
  bool finished() const { return eof_ && pos_ >= buf_.size(); }

 private:
  const int fd_;
  const std::string name_;
  const StopToken stop_;
  std::string buf_;
  size_t pos_ = 0;   // buf_[0, pos_) was handed out already
  uint64_t line_ = 0;
  bool eof_ = false;
};

}  // namespace momenta
