// The setup phase: the sparse array with its random-walk regions (or a kept
// one made with the same seed and parameters), and the ranges every later
// phase queries.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Makes or reuses the array (timed as phase "setup"), arms the signal
// cleanup unless keeping, and fills ctx.report.setup, .data_on_disk,
// .scan_ranges and ctx.ranges. Dies when the folder lacks the data + 2 GiB.
void RunSetup(DriverContext& ctx);

}  // namespace momenta::moments_driver
