#include "storage/util/line_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace momenta {

Result<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path, StopToken stop) {
  if (path == "-") return std::make_unique<LineReader>(STDIN_FILENO, "stdin", stop);
  int fd;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR && !stop.requested());
  if (fd < 0) return Status::FromErrno(path, errno);
  auto in = std::make_unique<LineReader>(fd, path, stop);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(path, errno);
  if (S_ISDIR(st.st_mode)) return Status::FromErrno(path, EISDIR);
  return in;
}

LineReader::~LineReader() {
  if (fd_ > 0) ::close(fd_);
}

bool LineReader::TakeLine(std::string_view* line) {
  const size_t nl = buf_.find('\n', pos_);
  if (nl == std::string::npos && !(eof_ && pos_ < buf_.size())) return false;
  const size_t end = nl == std::string::npos ? buf_.size() : nl;
  *line = std::string_view(buf_.data() + pos_, end - pos_);
  pos_ = nl == std::string::npos ? buf_.size() : nl + 1;
  ++line_;
  return true;
}

Result<bool> LineReader::Fill(int wait_ms) {
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  // Wait for input or a stop (a blocking read would not wake).
  const int wake = stop_.fd();
  pollfd p[2] = {{fd_, POLLIN, 0}, {wake, POLLIN, 0}};
  const int ready = ::poll(p, wake >= 0 ? 2 : 1, wait_ms);
  if (ready < 0 && errno != EINTR) return Status::FromErrno(name_, errno);
  if (ready <= 0 || (p[1].revents & POLLIN) || stop_.requested()) return false;
  char chunk[1 << 16];
  const ssize_t n = ::read(fd_, chunk, sizeof chunk);
  if (n < 0) {
    if (errno == EINTR) return false;
    return Status::FromErrno(name_, errno);
  }
  if (n == 0) eof_ = true;
  buf_.append(chunk, static_cast<size_t>(n));
  return true;
}

Result<LineReader::Got> LineReader::Next(std::string_view* line, std::chrono::milliseconds wait) {
  while (true) {
    if (TakeLine(line)) return Got::kLine;
    if (eof_) return Got::kEnd;
    auto filled = Fill(wait.count() >= 0 ? static_cast<int>(wait.count()) : -1);
    if (!filled.ok()) return filled.status();
    if (!*filled) return Got::kNothing;
  }
}

Result<std::optional<std::string>> LineReader::Next() {
  while (true) {
    std::string_view line;
    if (TakeLine(&line)) return std::optional<std::string>(std::string(line));
    if (eof_) return std::optional<std::string>();
    MOMENTA_RETURN_IF_ERROR(stop_.Check(name_));
    auto filled = Fill(-1);
    if (!filled.ok()) return filled.status();
  }
}

bool LineReader::Ready() {
  if (Buffered()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

Result<bool> LineReader::WaitReady(int64_t timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!Buffered()) {
    MOMENTA_RETURN_IF_ERROR(stop_.Check(name_));
    // Whole milliseconds rounded up, so the wait never ends early.
    const int64_t left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    // Bytes (maybe not a whole line yet), the end, or nothing: the loop decides.
    auto filled = Fill(static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (!filled.ok()) return filled.status();
  }
  return true;
}

}  // namespace momenta
