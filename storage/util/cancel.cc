#include "storage/util/cancel.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <string>

namespace momenta {
namespace {

// -1: no request; 0: a request without a signal; N > 0: signal N asked.
std::atomic<int> g_request{-1};
static_assert(std::atomic<int>::is_always_lock_free, "RequestCancel must be async-signal-safe");

std::string SignalName(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "signal " + std::to_string(signal);
  }
}

}  // namespace

void RequestCancel(int signal) {
  int none = -1;
  g_request.compare_exchange_strong(none, signal > 0 ? signal : 0, std::memory_order_relaxed);
}

bool CancelRequested() { return g_request.load(std::memory_order_relaxed) >= 0; }

int CancelSignal() { return std::max(0, g_request.load(std::memory_order_relaxed)); }

Status CheckCancel(std::string_view context) {
  const int request = g_request.load(std::memory_order_relaxed);
  if (request < 0) return Status::OK();
  return Status::Interrupted(context, request > 0 ? "by " + SignalName(request) : "cancelled");
}

void ResetCancel() { g_request.store(-1, std::memory_order_relaxed); }

}  // namespace momenta
