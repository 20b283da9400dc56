// The statistics an Ola buffer answers: those that follow from a range's index
// moments (statistics.h, ComputeIndexStat). The others are refused with the
// buffer that would serve them.
#pragma once

#include <cstdint>
#include <span>

#include "buffers/algebra/moments.h"
#include "buffers/algebra/statistics.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

// `stat` over [p, q) from the Ola buffer's range moments `index` (about p,
// count q − p, orders 0..N−1): ComputeIndexStat, except that var, std, sumsq, rms, min
// and max give InvalidArgument("<stat>: the Ola buffer keeps index moments
// only ...; the default buffer (--buffer hbb) serves it").
Result<StatAnswer> OlaStat(Stat stat, const StatParams& params, const IndexMoments& index, uint64_t p);

// Kind ola: whether every stat of `stats` is answered from the Ola buffer's
// index moments alone (ComputeIndexStat), reading none of the tree's partial
// leaves; an integer dtype's sum and mean come exactly from the tree instead.
bool OlaAlone(std::span<const Stat> stats, DType dtype);

}  // namespace momenta
