// momenta's side of every measurement: the buffered array opened the way
// the driver opens it, its tiers described, cold queries and rebuilds timed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/moments/context.h"
#include "buffers/buffered_array.h"

namespace momenta::moments_driver {

// BufferedArray::Open of the driver's array with the default buffer options
// (which builds the buffer when missing or stale); Open's notices go to
// *notices when given. Dies on failure.
std::unique_ptr<BufferedArray> OpenArray(const DriverPaths& paths, bool writable, IoKind kind = IoKind::kAuto,
                                         std::vector<std::string>* notices = nullptr);

// Touches every RAM-tier node once through the mapping, as any process that
// has answered a query has: those pages then stay (mapped pages are not
// dropped by POSIX_FADV_DONTNEED). The disk tier is never touched this way.
void TouchRamTier(BufferedArray& ba);

// "leaf 16384 elements (128.0 KiB), 2 levels, fanout 64, RAM tier ..."
std::string TierText(BufferedArray& ba);

// One cold query of r: the array's and the tree's pages dropped (untimed),
// then Summarize and ComputeStat timed: sum, mean and var, or with
// `extremes` min and max. Dies if momenta fails.
Sample ColdQuery(const DriverPaths& paths, BufferedArray& ba, const Range& r, bool extremes);

// The first `count` of ctx.ranges.ranges as cold queries (sum+mean+var, or
// min+max with `extremes`); prints one "queries" line.
QueryRun RunQueries(const DriverContext& ctx, BufferedArray& ba, int count, bool extremes, const std::string& label);

// One Rebuild with `options`, the array's and the tree's pages dropped first.
BuildRun TimedRebuild(const DriverPaths& paths, BufferedArray& ba, const TreeOptions& options);

}  // namespace momenta::moments_driver
