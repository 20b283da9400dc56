#include "stream/drive/stop_token.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace momenta {

bool StopToken::SleepUnlessStopped(std::chrono::milliseconds d) const {
  if (requested()) return false;
  const int ms = static_cast<int>(std::max<int64_t>(0, d.count()));
  if (fd_ < 0) {
    usleep(static_cast<useconds_t>(ms) * 1000);
  } else {
    pollfd p{fd_, POLLIN, 0};
    poll(&p, 1, ms);
  }
  return !requested();
}

}  // namespace momenta
