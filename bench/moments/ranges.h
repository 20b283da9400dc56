// The query ranges, drawn once from the seed so every part of a run (and a
// later run on a kept setup) asks the same questions.
#pragma once

#include "bench/moments/config.h"
#include "bench/moments/results.h"

namespace momenta::moments_driver {

// max(queries, off_queries) ranges of at least 2^min_len_log2 elements,
// alternately with both ends in data (kind 0) and anywhere (kind 1); and
// `scans` ranges with data at both ends, at most scan_max_gib long (doubled
// until the regions allow it).
QuerySet MakeRanges(const Config& g, const Setup& s);

}  // namespace momenta::moments_driver
