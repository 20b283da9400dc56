// SIGINT and SIGTERM for every CLI command that runs long or waits: the
// first one asks the process's work to stop (storage/util/cancel.h: one request
// for the whole process). Loops over chunks (update, import, export, build,
// a rebuild on open) see it at their next chunk boundary through CheckCancel,
// clean up their temporary files and return Interrupted; loops that wait
// (a line reader, the monitor's loops, a site connecting, the root's server)
// wait on StopToken::Cancel() (storage/util/stop_token.h), whose descriptor
// the request makes readable, so a blocked wait wakes at once. The command
// then exits 128 + the signal (130 for SIGINT, 143 for SIGTERM). A second
// signal ends the process at once.
#pragma once

#include <string_view>

#include "storage/util/status.h"

namespace momenta::cli {

// Installs the handlers (without SA_RESTART, so a blocked read or write
// returns EINTR and its loop sees the request) after opening the request's
// wake descriptor (OpenCancelWake). Call before the work starts; calling it
// again is harmless. `hook`, when not null, is also called from the handler,
// so it must be async-signal-safe (e.g. RootServer::Stop: an atomic store and
// a write(2)).
void InstallCancelHandlers(void (*hook)() = nullptr);

// 128 + the signal that asked to stop (130 for SIGINT, 143 for SIGTERM; 130
// when no signal is known). REQUIRES: CancelRequested()
int StopExitCode();

// Prints "momenta: <status>" (and "; <what>" when given: what was done
// before the stop) and returns StopExitCode().
// REQUIRES: status.code() == Status::Code::kInterrupted
int FailInterrupted(const Status& status, std::string_view what = {});

// The exit code for `status`: FailInterrupted for an interruption, else Fail.
int FailOrInterrupted(const Status& status);

}  // namespace momenta::cli
