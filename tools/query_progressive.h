// `momenta query --progressive` and `--approx`: a range's sum, count, mean,
// sumsq or rms answered first from the moment buffer's nodes alone (an estimate and an
// interval guaranteed to hold the exact answer; buffers/algebra/range_bounds.h),
// then narrower as the end leaves are read a piece at a time, ending with
// the ordinary query's answer (buffers/tree/progressive_sum.h; sumsq and rms:
// buffers/algebra/square_bounds.h, over the same pieces, both buffer kinds through
// their tree).
#pragma once

#include <string>

#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"

namespace momenta::cli {

// The statistics --progressive answers (the one-line refusal names them).
inline constexpr const char* kProgressiveStats = "sum, count, mean, sumsq and rms";
bool ServedProgressively(Stat stat);

// Answers `stat` over `range` progressively, one line per bound on stdout:
//   text:   "sum 1234.5 [1200, 1300] approx" ... "sum 1250.25 [1250.25, 1250.25] exact"
//           (" or nan" after the interval while a NaN may decide the answer;
//           a NaN answer prints "sum nan [nan, nan] ...")
//   --json: {"stat":"sum","estimate":E,"lower":L,"upper":U,"exact":false,
//            "nan":"no"|"maybe"|"certain","array_bytes_read":N,"elapsed_us":T}
// The first line reads no array byte; with `approx` it is the only one
// ("exact" is then true only when the nodes alone decide the answer). The
// last line otherwise is the ordinary query's answer (as `momenta query`
// prints it), its interval widened to hold it if rounding put it outside.
// stdout is flushed after every line. A damaged buffer node (Corruption) is
// rebuilt by the ordinary query (a notice says so) and the bounds start over
// from the new buffer. Returns the exit code.
// REQUIRES: ServedProgressively(stat); range inside the array
int AnswerProgressive(BufferedArray& ba, const std::string& path, Stat stat, IndexRange range, bool approx, bool json);

}  // namespace momenta::cli
