// The update phases: warm single-element BufferedArray::Apply (the data
// read once, as any reader leaves it), scattered over all the data beside
// the kernel's floor, to a hot set, sustained to fdatasync, through the
// other I/O backends; then the answers and Verify() after them.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// Phases "warm-up", "updates", "sustained" and "backends": fills the
// update fields of ctx.report (medians of update_rounds rounds) and sets
// .have_updates. Everything is synced before each timed part.
void RunUpdates(DriverContext& ctx);

// Phase "verify": a few scan and query ranges cold against an exact extent
// scan, then BufferedArray::Verify(); fills ctx.report.verify.
void RunVerifyAfterUpdates(DriverContext& ctx);

}  // namespace momenta::moments_driver
