// The report: the run's opening lines, and at the end the markdown tables of
// what the phases measured (only the parts that ran), where the time went,
// and what other processes did during each phase.
#pragma once

#include "bench/moments/context.h"

namespace momenta::moments_driver {

// The opening lines: the configuration, the load average, fio's figures as given.
void PrintRunHeader(const DriverContext& ctx);

// "## Results" and everything after it, from ctx.report, ctx.correct and ctx.usage.
void PrintReport(const DriverContext& ctx);

}  // namespace momenta::moments_driver
