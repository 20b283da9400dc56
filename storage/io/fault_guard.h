// Copies to or from memory-mapped files (and calls that read them) that
// return false instead of killing the process when a page faults with SIGBUS: another process truncated the
// file under the mapping, or a store into a sparse hole found the disk full.
//
// A SIGBUS handler is installed once per process (InstallFaultGuard); faults
// outside a guarded copy or call on the faulting thread are passed on to whatever
// handler was there before, or get the default action.
#pragma once

#include <cstddef>
#include <type_traits>

namespace momenta {

// Installs the process-wide SIGBUS handler (idempotent, thread-safe).
void InstallFaultGuard();

// memcpy(dest, src, length); false if a page of src or dest raised SIGBUS
// (then some bytes of dest may already be written). Costs no system call.
// REQUIRES: InstallFaultGuard() was called
[[nodiscard]] bool GuardedCopy(char* dest, const char* src, size_t length);

// Runs call(context); false if a load or store in [begin, begin + length)
// raised SIGBUS (the file was truncated under a mapping), which cuts the call
// short at the faulting access: it returns to here, not to the call's caller.
// So the call must take no lock and own nothing but memory its own frames
// allocated (a fault leaks that): e.g. sums over mapped bytes into a result
// the caller owns. A page evicted meanwhile is read back by the fault (no
// SIGBUS). Costs no system call (sigsetjmp(env, 0)).
// REQUIRES: InstallFaultGuard() was called
[[nodiscard]] bool GuardedCall(const char* begin, size_t length, void (*call)(void*), void* context);

// GuardedCall of a callable: GuardedCallOf(begin, length, [&] { ... }).
template <class F>
[[nodiscard]] bool GuardedCallOf(const char* begin, size_t length, F&& f) {
  return GuardedCall(
      begin, length, [](void* p) { (*static_cast<std::remove_reference_t<F>*>(p))(); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace momenta
