// How a driver loop learns that it should stop: a flag it polls between
// items, and a descriptor it polls beside the one it waits on (its input, a
// socket), readable from the stop on, so a blocking wait wakes at once.
// Whoever owns the flag and the descriptor (the CLI's signal handlers,
// tools/stop_signals.h) sets them; the token only reads them.
#pragma once

#include <atomic>
#include <chrono>

namespace momenta {

class StopToken {
 public:
  // A token that never stops.
  StopToken() = default;
  // Stopped once *flag != 0; `fd` is readable from then on, or -1 (then only
  // the flag is seen, between waits). REQUIRES: *flag outlives the token.
  StopToken(const std::atomic<int>* flag, int fd) : flag_(flag), fd_(fd) {}

  bool requested() const { return flag_ != nullptr && flag_->load() != 0; }
  int fd() const { return fd_; }
  // Sleeps up to `d`; false at once when a stop is requested (before or during).
  bool SleepUnlessStopped(std::chrono::milliseconds d) const;

 private:
  const std::atomic<int>* flag_ = nullptr;
  int fd_ = -1;
};

}  // namespace momenta
