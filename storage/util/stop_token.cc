#include "storage/util/stop_token.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "storage/util/cancel.h"

namespace momenta {

StopToken StopToken::Cancel() {
  StopToken t;
  t.cancel_ = true;
  return t;
}

bool StopToken::requested() const {
  if (cancel_) return CancelRequested();
  return flag_ != nullptr && flag_->load() != 0;
}

int StopToken::fd() const { return cancel_ ? CancelFd() : fd_; }

Status StopToken::Check(std::string_view context) const {
  if (cancel_) return CheckCancel(context);
  return requested() ? Status::Interrupted(context, "stopped") : Status::OK();
}

bool StopToken::SleepUnlessStopped(std::chrono::milliseconds d) const {
  if (requested()) return false;
  const int ms = static_cast<int>(std::max<int64_t>(0, d.count()));
  const int wake = fd();
  if (wake < 0) {
    usleep(static_cast<useconds_t>(ms) * 1000);
  } else {
    pollfd p{wake, POLLIN, 0};
    poll(&p, 1, ms);
  }
  return !requested();
}

}  // namespace momenta
