#include "tools/stop_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <csignal>

namespace momenta::cli {

namespace {

std::atomic<int> g_signal{0};
int g_pipe[2] = {-1, -1};
std::atomic<void (*)()> g_hook{nullptr};

void OnStopSignal(int sig) {
  const int saved = errno;
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  const char b = 1;
  [[maybe_unused]] ssize_t n = write(g_pipe[1], &b, 1);  // non-blocking: one byte is enough
  if (auto hook = g_hook.load()) hook();
  errno = saved;
}

}  // namespace

void InstallStopSignals(void (*hook)()) {
  g_hook = hook;
  if (g_pipe[0] >= 0) return;
  if (pipe2(g_pipe, O_NONBLOCK | O_CLOEXEC) != 0) g_pipe[0] = g_pipe[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read(2) returns EINTR too
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool StopRequested() { return g_signal.load() != 0; }

int StopSignal() { return g_signal.load(); }

int StopFd() { return g_pipe[0]; }

int StopExitCode() {
  assert(StopRequested());
  return 128 + g_signal.load();
}

StopToken SignalStopToken() { return StopToken(&g_signal, g_pipe[0]); }

}  // namespace momenta::cli
