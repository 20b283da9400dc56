// The disk-tier-off phase: the paper's all-in-RAM bins
// (buffers/REFERENCE.md §3.6), rebuilt, queried cold on the same ranges and
// compared with the disk tier's answers; then back to the default tree.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Phase "off": fills ctx.report.build_off, .tiers_off, .leaf_off,
// .off_scratch_ms, .off and .off_ext, and appends one more rebuild with the
// default options to .builds_on.
void RunTierOff(DriverContext& ctx);

}  // namespace momenta::moments_driver
