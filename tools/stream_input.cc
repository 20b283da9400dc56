#include "tools/stream_input.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "storage/log_codec.h"
#include "storage/log_segments.h"
#include "stream/window/window_spec.h"
#include "tools/cli_common.h"
#include "tools/stop_signals.h"

namespace momenta::cli {

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<LogTimes> ReadLogTimes(const std::string& log_dir) {
  auto segments = ListLogSegments(log_dir);
  if (!segments.ok()) return segments.status();
  LogTimes t;
  if (segments->empty()) return t;
  LogRecord r;
  {
    auto reader = LogReader::Open(log_dir);
    if (!reader.ok()) return reader.status();
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status();
    if (*more) t.first = r.time;
  }
  LogReaderOptions o;
  o.from_sequence = segments->back().first_sequence;
  auto reader = LogReader::Open(log_dir, o);
  if (!reader.ok()) return reader.status();
  while (true) {
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status();
    if (!*more) break;
    t.newest = std::max(t.newest.value_or(r.time), r.time);
  }
  return t;
}

Result<bool> LogSource::Next(int64_t* ts, int64_t* item, std::chrono::milliseconds wait) {
  LogRecord r;
  while (true) {
    Result<bool> more = false;
    if (!follow_) {
      more = reader_->Next(&r);
    } else {
      // In slices, so that a stop signal is seen within 100 ms.
      const auto deadline = std::chrono::steady_clock::now() + wait;
      while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        more = reader_->NextWithin(&r, std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(100)));
        if (!more.ok() || *more || left.count() <= 100 || StopRequested()) break;
      }
    }
    if (!more.ok()) return more.status();
    for (; damage_seen_ < reader_->damage().size(); ++damage_seen_)
      PrintNotice("update log: " + reader_->damage()[damage_seen_].ToString());
    if (!*more) return false;
    *ts = std::clamp<int64_t>(r.time, -kMaxTime, kMaxTime);
    if (mapping_.kind() == ItemMapping::Kind::kIndex) {
      *item = mapping_.FromIndex(r.index);
      return true;
    }
    const Value v = LogValueFromRaw(reader_->dtype(), r.new_raw);
    const double d = v.kind == Value::Kind::kFloat ? v.f
                     : v.kind == Value::Kind::kInt ? static_cast<double>(v.i)
                                                    : static_cast<double>(v.u);
    if (mapping_.FromValue(d, item)) return true;
    ++skipped_;
  }
}

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
    // Wait for input or a stop signal (a blocking read would not wake).
    pollfd p[2] = {{fd_, POLLIN, 0}, {StopFd(), POLLIN, 0}};
    const int ready = ::poll(p, StopFd() >= 0 ? 2 : 1, wait.count() >= 0 ? static_cast<int>(wait.count()) : -1);
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

}  // namespace momenta::cli
