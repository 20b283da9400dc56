// The serving driver's phases, each printing its own table rows.
#pragma once

#include "bench/serving/serve_util.h"

namespace momenta::serving {

struct Context {
  Flags flags;
  std::string sidecar;  // the array's sidecar folder
  uint64_t length = 0;
  std::vector<Range> ranges;  // flags.queries ranges, kinds alternating
  bool correct = true;        // every checked answer was right
};

// One range at a time inside this process: cold (caches dropped before each
// query) and warm (end leaves cached), the page cache asked first and not.
void RunInProcess(Context& ctx);
// Cold single queries against fio replaying the very reads each one made, as
// one batch at their depth, buffered or O_DIRECT as issued and all O_DIRECT
// (coldfio.cc).
void RunColdFio(Context& ctx);
// The CLI as a whole process against `momenta --version`, warm and fully cold.
void RunCli(Context& ctx);
// Batches of ranges cold and warm, against fio's random-read bound.
void RunBatches(Context& ctx);
// An overview of the whole array in flags.bins bins, exact and snapped, cold.
void RunBins(Context& ctx);
// Warm queries per second from 1 and 2 threads sharing one handle.
void RunThreads(Context& ctx);
// The same ranges asked five times after a cache drop, reads kept in the page
// cache against O_DIRECT on every miss (revisit.cc).
void RunRevisit(Context& ctx);

}  // namespace momenta::serving
