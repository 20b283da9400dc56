#include "tools/cli_signals.h"

#include <signal.h>

#include <atomic>
#include <cassert>
#include <csignal>
#include <cstdio>
#include <string>

#include "storage/util/cancel.h"
#include "tools/cli_common.h"

namespace momenta::cli {
namespace {

std::atomic<void (*)()> g_hook{nullptr};
static_assert(std::atomic<void (*)()>::is_always_lock_free, "the handler reads the hook");

void OnSignal(int sig) {
  RequestCancel(sig);  // keeps errno
  if (auto hook = g_hook.load()) hook();
}

}  // namespace

void InstallCancelHandlers(void (*hook)()) {
  g_hook = hook;
  OpenCancelWake();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second signal takes the default action: the process ends
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int StopExitCode() {
  const int sig = CancelSignal();
  return 128 + (sig > 0 ? sig : SIGINT);
}

int FailInterrupted(const Status& status, std::string_view what) {
  assert(status.code() == Status::Code::kInterrupted);
  std::string line = "momenta: " + status.ToString();
  if (!what.empty()) line += "; " + std::string(what);
  std::fprintf(stderr, "%s\n", line.c_str());
  return StopExitCode();
}

int FailOrInterrupted(const Status& status) {
  if (status.code() == Status::Code::kInterrupted) return FailInterrupted(status);
  return Fail(status);
}

}  // namespace momenta::cli
