#include "stream/drive/line_buffer.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace momenta {

LineBuffer::~LineBuffer() {
  if (fd_ > 0) ::close(fd_);
}

Result<LineBuffer::Got> LineBuffer::Next(std::string_view* line, std::chrono::milliseconds wait) {
  while (true) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos || (eof_ && pos_ < buf_.size())) {
      const size_t end = nl == std::string::npos ? buf_.size() : nl;
      *line = std::string_view(buf_.data() + pos_, end - pos_);
      pos_ = nl == std::string::npos ? buf_.size() : nl + 1;
      ++line_;
      return Got::kLine;
    }
    if (eof_) return Got::kEnd;
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    // Wait for input or a stop (a blocking read would not wake).
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_.fd(), POLLIN, 0}};
    const int ready = ::poll(p, stop_.fd() >= 0 ? 2 : 1, wait.count() >= 0 ? static_cast<int>(wait.count()) : -1);
    if (ready < 0 && errno != EINTR) return Status::FromErrno(name_, errno);
    if (ready <= 0 || (p[1].revents & POLLIN)) return Got::kNothing;
    char chunk[1 << 16];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) return Got::kNothing;
      return Status::FromErrno(name_, errno);
    }
    if (n == 0) eof_ = true;
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace momenta
