// The cold-query phases: random ranges queried with the array's and the
// tree's pages dropped before each, and a few of them checked against an
// exact scan.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Phase "queries": the disk tier on, into ctx.report.on and .on_ext.
void RunColdQueries(DriverContext& ctx);

// Phase "checks": the data read once (warm), then the first `checks` cold
// queries of ctx.report.on and .on_ext against an exact extent scan.
void RunExactChecks(DriverContext& ctx);

}  // namespace momenta::moments_driver
