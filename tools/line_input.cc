#include "tools/line_input.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "storage/util/cancel.h"

namespace momenta::cli {

Result<std::unique_ptr<LineInput>> LineInput::Open(const std::string& path) {
  if (path == "-") return std::unique_ptr<LineInput>(new LineInput(STDIN_FILENO, false, "stdin"));
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR && !CancelRequested());
  if (fd < 0) return Status::FromErrno(path, errno);
  std::unique_ptr<LineInput> in(new LineInput(fd, true, path));
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(path, errno);
  if (S_ISDIR(st.st_mode)) return Status::FromErrno(path, EISDIR);
  return in;
}

LineInput::~LineInput() {
  if (owned_) ::close(fd_);
}

Status LineInput::Fill() {
  if (buffer_at_ > 0) {
    buffer_.erase(0, buffer_at_);
    buffer_at_ = 0;
  }
  char bytes[1 << 16];
  while (true) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(name_));
    const ssize_t n = ::read(fd_, bytes, sizeof bytes);
    if (n > 0) {
      buffer_.append(bytes, static_cast<size_t>(n));
      return Status::OK();
    }
    if (n == 0) {
      eof_ = true;
      return Status::OK();
    }
    if (errno != EINTR) return Status::FromErrno(name_, errno);  // EINTR: CheckCancel above decides
  }
}

Result<std::optional<std::string>> LineInput::Next() {
  while (true) {
    const size_t newline = buffer_.find('\n', buffer_at_);
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(buffer_at_, newline - buffer_at_);
      buffer_at_ = newline + 1;
      ++line_number_;
      return std::optional<std::string>(std::move(line));
    }
    if (eof_) {
      if (buffer_at_ == buffer_.size()) return std::optional<std::string>();
      std::string line = buffer_.substr(buffer_at_);
      buffer_at_ = buffer_.size();
      ++line_number_;
      return std::optional<std::string>(std::move(line));
    }
    MOMENTA_RETURN_IF_ERROR(Fill());
  }
}

bool LineInput::Buffered() const { return eof_ || buffer_.find('\n', buffer_at_) != std::string::npos; }

bool LineInput::Ready() {
  if (Buffered()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

Result<bool> LineInput::WaitReady(int64_t timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!Buffered()) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(name_));
    // Whole milliseconds rounded up, so the wait never ends early.
    const int64_t left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (n < 0 && errno != EINTR) return Status::FromErrno(name_, errno);  // EINTR: CheckCancel decides
    if (n > 0) MOMENTA_RETURN_IF_ERROR(Fill());  // bytes (maybe not a whole line yet) or the end
  }
  return true;
}

}  // namespace momenta::cli
