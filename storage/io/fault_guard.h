// Copies to or from memory-mapped files that return false instead of killing
// the process when a page faults with SIGBUS: another process truncated the
// file under the mapping, or a store into a sparse hole found the disk full.
//
// A SIGBUS handler is installed once per process (InstallFaultGuard); faults
// outside a guarded copy on the faulting thread are passed on to whatever
// handler was there before, or get the default action.
#pragma once

#include <cstddef>

namespace momenta {

// Installs the process-wide SIGBUS handler (idempotent, thread-safe).
void InstallFaultGuard();

// memcpy(dest, src, length); false if a page of src or dest raised SIGBUS
// (then some bytes of dest may already be written). Costs no system call.
// REQUIRES: InstallFaultGuard() was called
[[nodiscard]] bool GuardedCopy(char* dest, const char* src, size_t length);

}  // namespace momenta
