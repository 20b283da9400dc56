// Cancellation of long work: one process-wide flag that a signal handler (or
// a test) sets, and that long loops poll at their chunk boundaries, where
// stopping leaves everything consistent.
//
//   for (chunk ...) {
//     MOMENTA_RETURN_IF_ERROR(CheckCancel(path));  // "Interrupted: a.npy: by SIGINT"
//     ...
//   }
//
// The loops that poll: the tree build (buffers/tree/tree_build.cc), the update
// apply loop, the CLI's import/export copies, and, through
// StopToken::Cancel() (storage/util/stop_token.h), every loop that waits: the
// line reader, the monitor's loops, the root's server. Whoever
// receives an Interrupted status cleans up what it made (temporary files) and
// passes the status on; nothing retries it.
#pragma once

#include <string_view>

#include "storage/util/status.h"

namespace momenta {

// Asks every loop that polls to stop, and makes CancelFd() readable.
// Async-signal-safe (a lock-free atomic store and a write(2)): call it from a
// signal handler. `signal` is the signal number that asked, or 0; the first
// request's number is kept.
void RequestCancel(int signal = 0);

// Opens the request's wake descriptor (a non-blocking self-pipe), once; a
// signal installer calls it before installing its handlers. Loops that block
// in poll(2) wait on CancelFd() beside their own descriptor (StopToken::Cancel,
// storage/util/stop_token.h), so a request wakes them at once.
void OpenCancelWake();

// Readable from the first request on (until ResetCancel); -1 before
// OpenCancelWake (then only the flag and EINTR are seen).
int CancelFd();

// True once RequestCancel has been called (until ResetCancel). Cheap: one
// relaxed atomic load; poll it once per chunk, not per element.
bool CancelRequested();

// The signal given to the first RequestCancel, 0 if none was (or no request).
int CancelSignal();

// OK, or Status::Interrupted naming `context` and the signal, e.g.
// "Interrupted: a.npy: by SIGTERM".
Status CheckCancel(std::string_view context);

// Clears the flag and drains CancelFd() (tests; a process that handles one
// request and goes on).
void ResetCancel();

}  // namespace momenta
