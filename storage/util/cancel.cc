#include "storage/util/cancel.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <string>

namespace momenta {
namespace {

// -1: no request; 0: a request without a signal; N > 0: signal N asked.
std::atomic<int> g_request{-1};
static_assert(std::atomic<int>::is_always_lock_free, "RequestCancel must be async-signal-safe");
// The wake pipe: [0] read end (CancelFd), [1] written once per request. -1: not open.
std::atomic<int> g_wake_read{-1};
std::atomic<int> g_wake_write{-1};

std::string SignalName(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace

void RequestCancel(int signal) {
  int none = -1;
  g_request.compare_exchange_strong(none, signal > 0 ? signal : 0, std::memory_order_relaxed);
  if (const int w = g_wake_write.load(); w >= 0) {
    const int saved = errno;  // a handler leaves errno as it found it
    const char b = 1;
    [[maybe_unused]] ssize_t n = ::write(w, &b, 1);  // non-blocking: one byte is enough
    errno = saved;
  }
}

void OpenCancelWake() {
  if (g_wake_read.load() >= 0) return;
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return;  // then the flag and EINTR alone
  g_wake_write.store(fds[1]);
  g_wake_read.store(fds[0]);
  if (CancelRequested()) RequestCancel();  // a request before the pipe: readable too
}

int CancelFd() { return g_wake_read.load(); }

bool CancelRequested() { return g_request.load(std::memory_order_relaxed) >= 0; }

int CancelSignal() { return std::max(0, g_request.load(std::memory_order_relaxed)); }

Status CheckCancel(std::string_view context) {
  const int request = g_request.load(std::memory_order_relaxed);
  if (request < 0) return Status::OK();
  return Status::Interrupted(context, request > 0 ? "by " + SignalName(request) : "cancelled");
}

void ResetCancel() {
  g_request.store(-1, std::memory_order_relaxed);
  if (const int r = g_wake_read.load(); r >= 0) {
    char drain[64];
    while (::read(r, drain, sizeof drain) > 0) {}
  }
}

}  // namespace momenta
