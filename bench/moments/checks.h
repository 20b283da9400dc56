// Checking momenta's answers, because a benchmark whose answers are wrong
// measures nothing. Each check prints one "check" line and clears
// ctx.correct when it fails.
#pragma once

#include "bench/moments/context.h"
#include "bench/moments/reference.h"

namespace momenta::moments_driver {

// m against the exact answer e over r. Sum, mean and var pass within 1e-9 of
// the value itself, or (for values near 0 by cancellation) within 1e-9 of
// the accuracy bound's scale (Σ|a|, Σ|a|/n, Σa²/n; DESIGN.md §5); min and
// max (`extremes`) must be equal.
void CheckAnswer(DriverContext& ctx, const char* label, const Range& r, const Answer& m, bool extremes, const Exact& e);

// Two runs' answers on the same ranges (disk tier on vs off): sum, mean and
// var within 2e-9 relative, min and max equal.
void CompareRuns(DriverContext& ctx, const QueryRun& a, const QueryRun& b, bool extremes);

}  // namespace momenta::moments_driver
