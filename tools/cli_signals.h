// SIGINT and SIGTERM for the CLI's long batch commands (update, import,
// export, build): the first one asks the work to stop at its next chunk
// boundary (storage/util/cancel.h), which then cleans up its temporary files and
// exits 128 + the signal (130, 143); a second one ends the process at once.
#pragma once

#include <string_view>

#include "storage/util/status.h"

namespace momenta::cli {

// Installs the handlers (without SA_RESTART, so a blocked read or write
// returns EINTR and its loop sees the request). Call before the work starts.
void InstallCancelHandlers();

// Prints "momenta: <status>" (and "; <what>" when given: what was done
// before the stop) and returns 128 + the signal that interrupted (130 for
// SIGINT, 143 for SIGTERM; 130 when no signal is known).
// REQUIRES: status.code() == Status::Code::kInterrupted
int FailInterrupted(const Status& status, std::string_view what = {});

// The exit code for `status`: FailInterrupted for an interruption, else Fail.
int FailOrInterrupted(const Status& status);

}  // namespace momenta::cli
