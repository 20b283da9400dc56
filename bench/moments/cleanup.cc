#include "bench/moments/cleanup.h"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace momenta::moments_driver {
namespace {

// What the signal handler removes: [0, 4) unlinked, [4] rmdir-ed.
char g_sig_paths[5][4096];
volatile std::sig_atomic_t g_cleanup_on_signal = 0;

void OnSignal(int sig) {
  if (g_cleanup_on_signal) {
    for (int k = 0; k < 4; ++k)
      if (g_sig_paths[k][0]) ::unlink(g_sig_paths[k]);
    if (g_sig_paths[4][0]) ::rmdir(g_sig_paths[4]);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void RemoveDriverFiles(const DriverPaths& paths) {
  std::error_code ec;
  std::filesystem::remove(paths.array, ec);
  std::filesystem::remove_all(paths.sidecar, ec);
  std::filesystem::remove(paths.setup, ec);
}

void InstallSignalCleanup(const DriverPaths& paths) {
  const std::string sig_paths[5] = {paths.array, paths.tree, paths.tree + ".verify", paths.setup, paths.sidecar};
  for (int k = 0; k < 5; ++k) {
    if (sig_paths[k].size() >= sizeof g_sig_paths[k]) Die("MOMENTA_BENCH_DIR path too long");
    std::strcpy(g_sig_paths[k], sig_paths[k].c_str());
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

void ArmSignalCleanup(bool armed) { g_cleanup_on_signal = armed ? 1 : 0; }

}  // namespace momenta::moments_driver
