// Removing the driver's files: at the end of a run without
// MOMENTA_BENCH_KEEP, before a fresh setup, and on SIGINT/SIGTERM once armed.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Removes the array, its sidecar folder and the setup text (missing ones are fine).
void RemoveDriverFiles(const DriverPaths& paths);

// Installs SIGINT and SIGTERM handlers that, while armed, unlink the array,
// the tree, the tree's ".verify" file and the setup text and remove the
// (then empty) sidecar folder, then die of the signal. The paths are copied
// into static storage (a handler can reach nothing else); dies if one is
// longer than that storage.
void InstallSignalCleanup(const DriverPaths& paths);
// Arms (true) or disarms the handlers' removal; disarmed at first.
void ArmSignalCleanup(bool armed);

}  // namespace momenta::moments_driver
