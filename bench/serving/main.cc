// The serving benchmark: what a query costs from each entry point
// on an existing array with its buffer (e.g. bench/run_moments.sh's kept 1
// TiB array: MOMENTA_BENCH_KEEP=1).
//
//   serve_driver --array=PATH --cli=build/tools/momenta --fio-iops=N [--fio=fio]
//       [--parts=inproc,coldfio,cli,batch,bins,threads,revisit]
//
// bench/run_serving.sh measures fio's bound first and passes it. Every
// figure is a median of interleaved runs (momenta then its reference, in
// turn); rows say which ranges hit holes (no I/O). Answers of batches, bins
// and threads are checked against single queries: any mismatch makes the
// exit status 3.
#include <cstdio>

#include "bench/serving/phases.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "storage/array/sidecar.h"

int main(int argc, char** argv) {
  using namespace momenta::serving;
  Context ctx{ParseFlags(argc, argv)};
  ctx.sidecar = momenta::SidecarPath(ctx.flags.array, "");
  {
    auto ba = Must(momenta::BufferedArray::Open(ctx.flags.array, momenta::BufferedArrayOptions{}), "open");
    ctx.length = ba->length();
    std::printf("array %s: %llu elements, leaves of %llu, io %s\n", ctx.flags.array.c_str(),
                static_cast<unsigned long long>(ctx.length),
                static_cast<unsigned long long>(TreeOf(*ba).layout().leaf_span()), ba->array().io().Name().c_str());
  }
  ctx.ranges =
      DrawRanges(ctx.flags.array, ctx.length, ctx.flags.queries, uint64_t{1} << ctx.flags.min_len_log2, ctx.flags.seed);
  std::printf("| case | figure | reference | ratio |\n|---|---|---|---|\n");
  if (ctx.flags.Wants("inproc")) RunInProcess(ctx);
  if (ctx.flags.Wants("coldfio")) RunColdFio(ctx);
  if (ctx.flags.Wants("cli")) RunCli(ctx);
  if (ctx.flags.Wants("batch")) RunBatches(ctx);
  if (ctx.flags.Wants("bins")) RunBins(ctx);
  if (ctx.flags.Wants("threads")) RunThreads(ctx);
  if (ctx.flags.Wants("revisit")) RunRevisit(ctx);
  if (!ctx.correct) {
    std::printf("\nSOME ANSWERS WERE WRONG: these figures measure nothing until that is fixed.\n");
    return 3;
  }
  return 0;
}
