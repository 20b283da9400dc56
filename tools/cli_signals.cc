#include "tools/cli_signals.h"

#include <signal.h>

#include <cassert>
#include <csignal>
#include <cstdio>
#include <string>

#include "storage/util/cancel.h"
#include "tools/cli_common.h"

namespace momenta::cli {
namespace {

void OnSignal(int sig) { RequestCancel(sig); }

}  // namespace

void InstallCancelHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second signal takes the default action: the process ends
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int FailInterrupted(const Status& status, std::string_view what) {
  assert(status.code() == Status::Code::kInterrupted);
  std::string line = "momenta: " + status.ToString();
  if (!what.empty()) line += "; " + std::string(what);
  std::fprintf(stderr, "%s\n", line.c_str());
  const int sig = CancelSignal();
  return 128 + (sig > 0 ? sig : SIGINT);
}

int FailOrInterrupted(const Status& status) {
  if (status.code() == Status::Code::kInterrupted) return FailInterrupted(status);
  return Fail(status);
}

}  // namespace momenta::cli
