// Ending a command on SIGINT or SIGTERM, within a second, whatever it waits
// on. The handlers (installed without SA_RESTART) record the signal and make
// a self-pipe readable; a command polls StopFd() beside the descriptor it
// waits on (its input, a socket being connected), so a blocking read or
// connect wakes at once. It then cleans up and exits with StopExitCode():
// 130 for SIGINT, 143 for SIGTERM.
//
// Kept apart from the commands so that every command that waits can share it;
// the loops of stream/drive/ see it through SignalStopToken().
#pragma once

#include "stream/drive/stop_token.h"

namespace momenta::cli {

// Installs the handlers for SIGINT and SIGTERM (idempotent). `hook`, when not
// null, is also called from the handler, so it must be async-signal-safe
// (e.g. RootServer::Stop: an atomic store and a write(2)).
void InstallStopSignals(void (*hook)() = nullptr);
// True once SIGINT or SIGTERM arrived (async-signal-safe).
bool StopRequested();
// The first stop signal that arrived, or 0.
int StopSignal();
// Readable from the first stop signal on (never drained); -1 before
// InstallStopSignals. Poll it for POLLIN beside the fd being waited on.
int StopFd();
// 128 + StopSignal(). REQUIRES: StopRequested()
int StopExitCode();
// A token that stops with the first stop signal, its fd StopFd().
// REQUIRES: InstallStopSignals was called (else the token's fd is -1).
StopToken SignalStopToken();

}  // namespace momenta::cli
