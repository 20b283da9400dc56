// Small, in-cache costs of the moment buffer: the moment algebra,
// summarizing one leaf, and warm queries and updates on a small dense array.
// The terabyte-scale, cold-cache figures come from moments_driver
// (bench/run_moments.sh); these isolate the CPU part of each.
//
//   MOMENTA_BENCH_DIR   folder for the small array (default: the current one);
//                       it is removed at exit.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "buffers/buffered_array.h"
#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "storage/array/array_file.h"

namespace momenta {
namespace {

constexpr uint64_t kSmallLength = uint64_t{1} << 22;  // 32 MiB of f8
constexpr uint64_t kLeaf = 16384;                     // the default leaf for f8, J = 2

std::vector<double> RandomWalk(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> step(-1, 1);
  std::vector<double> v(n);
  double x = 0;
  for (double& e : v) e = x += step(rng);
  return v;
}

RangeSummary SummaryOf(const std::vector<double>& v, int order) {
  std::vector<double> scratch(v.size());
  return RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(v.data()), v.size(),
                                  scratch.data());
}

void BM_Merge(benchmark::State& state) {
  const int order = static_cast<int>(state.range(0));
  const RangeSummary a = SummaryOf(RandomWalk(1000, 1), order);
  const RangeSummary b = SummaryOf(RandomWalk(1000, 2), order);
  for (auto _ : state) benchmark::DoNotOptimize(Merge(a, b));
}
BENCHMARK(BM_Merge)->ArgName("order")->Arg(2)->Arg(4)->Arg(8);

void BM_UnmergeRight(benchmark::State& state) {
  const int order = static_cast<int>(state.range(0));
  const RangeSummary a = SummaryOf(RandomWalk(1000, 1), order);
  const RangeSummary total = Merge(a, SummaryOf(RandomWalk(1000, 2), order));
  for (auto _ : state) benchmark::DoNotOptimize(UnmergeRight(total, a));
}
BENCHMARK(BM_UnmergeRight)->ArgName("order")->Arg(2)->Arg(8);

// One leaf of the default tree, as the build and a query's partial leaves do.
void BM_SummarizeLeaf(benchmark::State& state) {
  const int order = static_cast<int>(state.range(0));
  const std::vector<double> v = RandomWalk(kLeaf, 3);
  std::vector<double> scratch(kLeaf);
  for (auto _ : state)
    benchmark::DoNotOptimize(RangeSummary::OfElements(order, DType::kF8,
                                                      reinterpret_cast<const char*>(v.data()),
                                                      kLeaf, scratch.data()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kLeaf * 8));
}
BENCHMARK(BM_SummarizeLeaf)->ArgName("order")->Arg(2)->Arg(8);

// A small dense array with its buffer, made once, removed at exit.
class SmallArray {
 public:
  static SmallArray& Get() {
    static SmallArray* instance = new SmallArray();
    return *instance;
  }
  BufferedArray& array() { return *array_; }
  const std::string& error() const { return error_; }

 private:
  SmallArray() {
    const char* dir = std::getenv("MOMENTA_BENCH_DIR");
    path_ = std::string(dir != nullptr && *dir ? dir : ".") + "/momenta_moments_bench_small.npy";
    Remove();
    std::atexit([] { Get().Remove(); });
    IoOptions io;
    io.writable = true;
    const uint64_t shape[1] = {kSmallLength};
    auto file = ArrayFile::Create(path_, DType::kF8, shape, io);
    if (!file.ok()) {
      error_ = file.status().ToString();
      return;
    }
    const std::vector<double> v = RandomWalk(kSmallLength, 4);
    if (Status s = (*file)->WriteRaw(0, kSmallLength, reinterpret_cast<const char*>(v.data())); !s.ok()) {
      error_ = s.ToString();
      return;
    }
    file->reset();
    BufferedArrayOptions options;
    options.io.writable = true;
    options.io.direct = false;  // in-cache costs: aligned reads must not bypass the page cache
    auto opened = BufferedArray::Open(path_, options);
    if (!opened.ok()) {
      error_ = opened.status().ToString();
      return;
    }
    array_ = std::move(opened).value();
  }
  void Remove() {
    array_.reset();
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    std::filesystem::remove_all(SidecarPath(path_), ec);
  }

  std::string path_;
  std::string error_;
  std::unique_ptr<BufferedArray> array_;
};

// Warm queries (array and tree in the page cache; the array is opened without
// O_DIRECT, which would send the aligned end reads to the device): sum+mean+var,
// or min+max.
void BM_WarmQuery(benchmark::State& state) {
  SmallArray& small = SmallArray::Get();
  if (!small.error().empty()) {
    state.SkipWithError(small.error().c_str());
    return;
  }
  const bool extremes = state.range(0) != 0;
  std::mt19937_64 rng(5);
  for (auto _ : state) {
    uint64_t p = rng() % kSmallLength, q = rng() % kSmallLength;
    if (p > q) std::swap(p, q);
    auto summary = small.array().Summarize(p, q + 1, extremes);
    if (!summary.ok()) {
      state.SkipWithError(summary.status().ToString().c_str());
      break;
    }
    StatParams params;
    for (Stat s : extremes ? std::vector<Stat>{Stat::kMin, Stat::kMax}
                           : std::vector<Stat>{Stat::kSum, Stat::kMean, Stat::kVar})
      benchmark::DoNotOptimize(ComputeStat(s, params, *summary, p, DType::kF8));
  }
}
BENCHMARK(BM_WarmQuery)->ArgName("minmax")->Arg(0)->Arg(1);

// Warm single-element updates, `batch` per Apply.
void BM_WarmApply(benchmark::State& state) {
  SmallArray& small = SmallArray::Get();
  if (!small.error().empty()) {
    state.SkipWithError(small.error().c_str());
    return;
  }
  const size_t batch = static_cast<size_t>(state.range(0));
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> value(-1000, 1000);
  std::vector<IndexedValue> updates(batch);
  for (auto _ : state) {
    state.PauseTiming();
    for (IndexedValue& u : updates) u = {rng() % kSmallLength, Value::Float(value(rng))};
    state.ResumeTiming();
    if (Status s = small.array().Apply(updates); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_WarmApply)->ArgName("batch")->Arg(1)->Arg(4096);

// The array side of one update, as Apply does it per element: the old value
// (ArrayFile::ReadRaw of one element: through io_uring, one submission), then
// the new one (WriteRaw: fallocate, then pwrite), and each system call alone.
void BM_ElementIo(benchmark::State& state) {
  SmallArray& small = SmallArray::Get();
  if (!small.error().empty()) {
    state.SkipWithError(small.error().c_str());
    return;
  }
  ArrayFile& array = small.array().array();
  const int what = static_cast<int>(state.range(0));
  std::mt19937_64 rng(7);
  char bytes[8];
  for (auto _ : state) {
    const uint64_t i = rng() % kSmallLength;
    Status s;
    switch (what) {
      case 0: s = array.ReadRaw(i, 1, bytes); break;
      case 1: s = array.WriteRaw(i, 1, bytes); break;
      case 2: s = array.io().Allocate(array.ByteOffset(i), 8); break;
      default: s = array.io().Write(array.ByteOffset(i), std::span<const char>(bytes, 8)); break;
    }
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  // The array changed behind the buffer's back: make it consistent again.
  std::vector<IndexedValue> touch = {{0, Value::Float(1)}};
  (void)small.array().Apply(touch);
  state.SetLabel(what == 0 ? "ReadRaw" : what == 1 ? "WriteRaw" : what == 2 ? "fallocate" : "pwrite");
}
BENCHMARK(BM_ElementIo)->ArgName("op")->DenseRange(0, 3);

}  // namespace
}  // namespace momenta

BENCHMARK_MAIN();
