#include "storage/io/fault_guard.h"

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>

namespace momenta {
namespace {

// Where a guarded copy or call on this thread resumes after a SIGBUS inside
// [source, source + length) or [dest, dest + length). Null outside one.
struct Recovery {
  sigjmp_buf env;
  const char* source;
  const char* dest;
  size_t length;
};
thread_local Recovery* volatile t_recovery = nullptr;

struct sigaction g_previous_sigbus;  // the handler we replaced; written once

bool FaultIsOurs(const Recovery* r, const siginfo_t* info) {
  if (r == nullptr || info == nullptr || info->si_code <= 0) return false;  // <= 0: sent, not a fault
  const char* addr = static_cast<const char*>(info->si_addr);
  return (addr >= r->source && addr < r->source + r->length) || (addr >= r->dest && addr < r->dest + r->length);
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  Recovery* r = t_recovery;
  if (FaultIsOurs(r, info)) {
    t_recovery = nullptr;
    siglongjmp(r->env, 1);
  }
  // Not ours: behave as if we were never installed.
  const struct sigaction& prev = g_previous_sigbus;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction != nullptr) prev.sa_sigaction(sig, info, context);
    return;
  }
  if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN) {
    // Default action. A fault re-executes the faulting instruction on return
    // and dies with SIGBUS; a sent signal is raised again (we run with
    // SA_NODEFER, so it is delivered at once).
    std::signal(SIGBUS, SIG_DFL);
    if (info == nullptr || info->si_code <= 0) std::raise(SIGBUS);
    return;
  }
  prev.sa_handler(sig);
}

}  // namespace

void InstallFaultGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sigemptyset(&sa.sa_mask);
    // SA_NODEFER: siglongjmp leaves the handler without restoring the signal
    // mask, so SIGBUS must not be blocked while it runs (this lets the copy
    // use sigsetjmp(env, 0), which costs no system call).
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
}

[[gnu::noinline]] bool GuardedCopy(char* dest, const char* src, size_t length) {
  Recovery recovery;
  recovery.source = src;
  recovery.dest = dest;
  recovery.length = length;
  if (sigsetjmp(recovery.env, 0) != 0) return false;  // back from OnSigbus
  t_recovery = &recovery;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  switch (length) {  // an element's size: one move, not a call to memcpy
    case 1:
      std::memcpy(dest, src, 1);
      break;
    case 2:
      std::memcpy(dest, src, 2);
      break;
    case 4:
      std::memcpy(dest, src, 4);
      break;
    case 8:
      std::memcpy(dest, src, 8);
      break;
    default:
      std::memcpy(dest, src, length);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_recovery = nullptr;
  return true;
}

[[gnu::noinline]] bool GuardedCall(const char* begin, size_t length, void (*call)(void*), void* context) {
  Recovery recovery;
  recovery.source = begin;
  recovery.dest = begin;
  recovery.length = length;
  if (sigsetjmp(recovery.env, 0) != 0) return false;  // back from OnSigbus
  t_recovery = &recovery;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  call(context);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_recovery = nullptr;
  return true;
}

}  // namespace momenta
