// The build phase: the first Open (which builds a missing buffer), timed
// rebuilds with the default options, and a breakdown of where a build's
// time goes (its read pattern alone, the summarizing alone).
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Phase "build": fills ctx.report.first_open (when Open built) and
// .tiers_on; with --parts build also .builds_on and .breakdown.
void RunBuild(DriverContext& ctx);

}  // namespace momenta::moments_driver
