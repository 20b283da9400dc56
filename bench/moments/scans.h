// The scans phase: a few long ranges with data at both ends, answered by
// momenta cold, then scanned by a plain C++ pread loop (also the exact
// reference the answers are checked against) and by NumPy memmap.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Phase "scans": fills ctx.report.scan_momenta, .scan_cpp and, when
// --numpy-script is given and runs, .scan_numpy.
void RunScans(DriverContext& ctx);

}  // namespace momenta::moments_driver
