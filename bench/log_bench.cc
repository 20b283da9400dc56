// Update-log appends per second, for each sync policy and batch size.
//
//   MOMENTA_BENCH_DIR       folder for the log (default: the current one)
//
// Each iteration is one LogWriter::Append of `batch` records (one frame of
// 16 + 40 * batch bytes), followed by Commit() under kBatch: one fdatasync a
// batch, as a CLI call does. kAlways syncs inside Append; kNone never syncs.
// Segments rotate at the default 64 MiB; old ones are dropped as the run goes
// so long runs do not fill the disk. The writer, its folder and the records
// are made before the timed loop. Compare the synced cases with
//   fio --name=log --rw=write --bs=<frame bytes> --fdatasync=1 --size=64m
// on the same file system (the frame size is in the label).
//
// Arguments: sync (0 always, 1 batch, 2 none), batch. Counters: items/s
// (records per second) and bytes/s (log bytes written).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "storage/log/log_codec.h"
#include "storage/log/log_writer.h"

namespace momenta {
namespace {

const LogSync kPolicies[] = {LogSync::kAlways, LogSync::kBatch, LogSync::kNone};

std::string BenchDir() {
  const char* v = std::getenv("MOMENTA_BENCH_DIR");
  const std::string base = v != nullptr && *v != '\0' ? v : ".";
  return base + "/momenta_log_bench." + std::to_string(::getpid());
}

void BM_LogAppend(benchmark::State& state) {
  const LogSync sync = kPolicies[state.range(0)];
  const size_t batch = static_cast<size_t>(state.range(1));
  const std::string dir = BenchDir();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  {
    LogWriterOptions o;
    o.sync = sync;
    auto w = LogWriter::Open(dir + "/log", o);
    if (!w.ok()) {
      state.SkipWithError(w.status().ToString().c_str());
      return;
    }
    std::vector<LogRecord> records(batch);
    for (size_t k = 0; k < batch; ++k) {
      records[k].index = k * 7919;
      records[k].time = 1700000000000 + static_cast<int64_t>(k);
      records[k].old_raw = LogRawFromValue(DType::kF8, Value::Float(static_cast<double>(k)));
      records[k].new_raw = LogRawFromValue(DType::kF8, Value::Float(k + 0.5));
    }
    uint64_t appends = 0;
    for (auto _ : state) {
      auto first = (*w)->Append(records);
      Status s = first.ok() ? (*w)->Commit() : first.status();
      if (!s.ok()) {
        state.SkipWithError(s.ToString().c_str());
        break;
      }
      if (++appends % 4096 == 0) {
        auto dropped = (*w)->DropSegmentsBefore((*w)->next_sequence());
        benchmark::DoNotOptimize(dropped);
      }
    }
    state.SetItemsProcessed(static_cast<int64_t>(appends * batch));
    state.SetBytesProcessed(static_cast<int64_t>(appends * LogFrameBytes(batch)));
    state.SetLabel("sync=" + std::string(LogSyncName(sync)) + " frame=" + std::to_string(LogFrameBytes(batch)) + "B");
    if (Status s = (*w)->Close(); !s.ok()) state.SkipWithError(s.ToString().c_str());
  }
  std::filesystem::remove_all(dir, ec);
}

BENCHMARK(BM_LogAppend)
    ->ArgNames({"sync", "batch"})
    ->ArgsProduct({{0, 1, 2}, {1, 100, 10000}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace momenta

BENCHMARK_MAIN();
