// How a loop that waits learns that it should stop: a flag it polls between
// items, and a descriptor it polls beside the one it waits on (its input, a
// socket), readable from the stop on, so a blocking wait wakes at once.
//
// The process has one stop request (storage/util/cancel.h: RequestCancel, which a
// front end's signal handler calls); StopToken::Cancel() is the token of that
// request, which every command that waits is given. A token over a flag of its
// own serves tests and programs that stop one loop and not the process.
#pragma once

#include <atomic>
#include <chrono>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

class StopToken {
 public:
  // A token that never stops.
  StopToken() = default;
  // Stopped once *flag != 0; `fd` is readable from then on, or -1 (then only
  // the flag is seen, between waits). REQUIRES: *flag outlives the token.
  StopToken(const std::atomic<int>* flag, int fd) : flag_(flag), fd_(fd) {}
  // The process's stop request (storage/util/cancel.h): stopped once RequestCancel
  // ran; its descriptor is CancelFd() (-1 until a signal installer opened it).
  static StopToken Cancel();

  bool requested() const;
  int fd() const;
  // OK, or Interrupted naming `context`: the process's request says the signal
  // ("Interrupted: stdin: by SIGINT", as CheckCancel), a flag "stopped".
  Status Check(std::string_view context) const;
  // Sleeps up to `d`; false at once when a stop is requested (before or during).
  bool SleepUnlessStopped(std::chrono::milliseconds d) const;

 private:
  const std::atomic<int>* flag_ = nullptr;
  int fd_ = -1;
  bool cancel_ = false;  // the process's request, not flag_
};

}  // namespace momenta
