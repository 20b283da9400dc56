// Updates through BufferedArray with the update log: each iteration applies a
// batch of random single-element updates (warm array, 1 Mi f8 elements) and
// commits it, for every sync policy. Reports updates/s (items_per_second).
//
//   MOMENTA_BENCH_DIR=<dir on the disk to measure> build/bench/update_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 1 << 20;

std::string BenchDir() {
  const char* d = std::getenv("MOMENTA_BENCH_DIR");
  return d && *d ? d : ".";
}

void BM_Update(benchmark::State& state) {
  const auto sync = static_cast<LogSync>(state.range(0));
  const size_t batch = static_cast<size_t>(state.range(1));
  const std::string dir = BenchDir() + "/momenta-update-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/a.npy";
  {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kLength};
    auto f = ArrayFile::Create(path, DType::kF8, shape, io);
    if (!f.ok()) {
      state.SkipWithError(f.status().ToString().c_str());
      return;
    }
    // Written (no holes), warm, random: an update rarely removes its leaf's
    // extreme (a constant fill would make every update rescan its leaf).
    std::mt19937_64 fill(7);
    std::vector<Value> values(kLength);
    for (auto& v : values) v = Value::Float(std::uniform_real_distribution<double>(0, 1e6)(fill));
    if (!(*f)->WriteValues(0, values).ok()) {
      state.SkipWithError("cannot fill the array");
      return;
    }
  }
  BufferedArrayOptions options;
  options.io.writable = true;
  options.sync = sync;
  auto ba = BufferedArray::Open(path, options);
  if (!ba.ok()) {
    state.SkipWithError(ba.status().ToString().c_str());
    return;
  }
  std::mt19937_64 rng(42);
  std::vector<IndexedValue> updates(batch);
  std::uniform_real_distribution<double> value(0, 1e6);
  for (auto _ : state) {
    for (auto& u : updates) u = {rng() % kLength, Value::Float(value(rng))};
    if (Status s = (*ba)->Apply(updates); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    if (Status s = (*ba)->Commit(); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  state.SetLabel(std::string(LogSyncName(sync)) + ", " + (*ba)->array().io().Name());
  ba->reset();
  std::filesystem::remove_all(dir);
}

BENCHMARK(BM_Update)
    ->ArgNames({"sync", "batch"})
    ->ArgsProduct({{static_cast<int>(LogSync::kAlways), static_cast<int>(LogSync::kBatch),
                    static_cast<int>(LogSync::kNone)},
                   {1, 100, 10000}})
    ->UseRealTime();

}  // namespace
}  // namespace momenta

BENCHMARK_MAIN();
