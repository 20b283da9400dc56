#include "buffers/ola/ola_statistics.h"

#include <string>

namespace momenta {

Result<StatAnswer> OlaStat(Stat stat, const StatParams& params, const IndexMoments& index, uint64_t p) {
  if (!ServedByIndexMoments(stat)) {
    const bool values = stat != Stat::kMin && stat != Stat::kMax;  // var std sumsq rms
    return Status::InvalidArgument(
        StatName(stat), std::string("the Ola buffer keeps index moments only, and ") + std::string(StatName(stat)) +
                            (values ? " needs the values' moments" : " needs the range's extremes") +
                            "; the default buffer (--buffer hbb) serves it");
  }
  return ComputeIndexStat(stat, params, index, p);
}

bool OlaAlone(std::span<const Stat> stats, DType dtype) {
  for (Stat s : stats) {
    if (!ServedByIndexMoments(s)) return false;
    if (DTypeIsInteger(dtype) && (s == Stat::kSum || s == Stat::kMean)) return false;
  }
  return true;
}

}  // namespace momenta
