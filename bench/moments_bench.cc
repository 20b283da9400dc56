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
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "buffers/algebra/node_slots.h"
#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/buffered_array.h"
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
  return RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(v.data()), v.size(), scratch.data());
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
    benchmark::DoNotOptimize(
        RangeSummary::OfElements(order, DType::kF8, reinterpret_cast<const char*>(v.data()), kLeaf, scratch.data()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kLeaf * 8));
}
BENCHMARK(BM_SummarizeLeaf)->ArgName("order")->Arg(2)->Arg(8);

// A query's run of 63 sibling nodes (leaves of a random walk) summed in one
// pass (NodeCodec::DecodeRun), by the long double kernel (compensated:0) and
// the compensated one (compensated:1, AVX2+FMA; skipped where the CPU lacks them).
void BM_DecodeRun(benchmark::State& state) {
  const int order = static_cast<int>(state.range(0));
  if (!SetCompensatedRunsForTesting(state.range(1) != 0)) {
    state.SkipWithError("this CPU lacks AVX2 or FMA: no compensated kernel");
    return;
  }
  constexpr uint64_t kNodes = 63, kSpan = 4096;
  const NodeCodec codec(order);
  const std::vector<double> walk = RandomWalk(kNodes * kSpan, 5);
  std::vector<double> nodes(kNodes * codec.doubles());
  for (uint64_t k = 0; k < kNodes; ++k)
    codec.Encode(SummaryOf(std::vector<double>(walk.begin() + k * kSpan, walk.begin() + (k + 1) * kSpan), order), k,
                 nodes.data() + k * codec.doubles());
  for (auto _ : state) benchmark::DoNotOptimize(codec.DecodeRun(nodes.data(), kNodes, kSpan, kSpan));
  state.counters["ns_per_node"] = benchmark::Counter(static_cast<double>(state.iterations() * kNodes),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  SetCompensatedRunsForTesting(true);
}
BENCHMARK(BM_DecodeRun)->ArgNames({"order", "compensated"})->ArgsProduct({{2, 8}, {0, 1}});

// An f8 array of `length` elements (sparse) with its buffer, made once by the
// benchmarks that use it and removed at exit: `fill` writes its data, then it
// is opened with `options`. error() says why it could not be made.
class BenchArray {
 public:
  using Fill = std::function<Status(ArrayFile&)>;
  BenchArray(const std::string& name, uint64_t length, const Fill& fill, const BufferedArrayOptions& options) {
    const char* dir = std::getenv("MOMENTA_BENCH_DIR");
    path_ = std::string(dir != nullptr && *dir ? dir : ".") + "/momenta_moments_bench_" + name + ".npy";
    Remove();
    Made().push_back(this);
    if (Made().size() == 1)
      std::atexit([] {
        for (BenchArray* a : Made()) a->Remove();
      });
    IoOptions io;
    io.writable = true;
    const uint64_t shape[1] = {length};
    auto file = ArrayFile::Create(path_, DType::kF8, shape, io);
    const Status s = file.ok() ? fill(**file) : file.status();
    if (!s.ok()) {
      error_ = s.ToString();
      return;
    }
    file->reset();
    auto opened = BufferedArray::Open(path_, options);
    if (!opened.ok()) {
      error_ = opened.status().ToString();
      return;
    }
    array_ = std::move(opened).value();
  }
  BufferedArray& array() { return *array_; }
  const std::string& error() const { return error_; }

 private:
  static std::vector<BenchArray*>& Made() {
    static std::vector<BenchArray*> made;
    return made;
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

// A small dense array (kSmallLength cells of a random walk), opened writable.
BenchArray& SmallArray() {
  static BenchArray* instance = [] {
    BufferedArrayOptions options;
    options.io.writable = true;
    options.io.direct = false;  // in-cache costs: aligned reads must not bypass the page cache
    auto fill = [](ArrayFile& file) {
      const std::vector<double> v = RandomWalk(kSmallLength, 4);
      return file.WriteRaw(0, kSmallLength, reinterpret_cast<const char*>(v.data()));
    };
    return new BenchArray("small", kSmallLength, fill, options);
  }();
  return *instance;
}

// Warm queries (array and tree in the page cache; the array is opened without
// O_DIRECT, which would send the aligned end reads to the device): sum+mean+var,
// or min+max.
void BM_WarmQuery(benchmark::State& state) {
  BenchArray& small = SmallArray();
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
    for (Stat s :
         extremes ? std::vector<Stat>{Stat::kMin, Stat::kMax} : std::vector<Stat>{Stat::kSum, Stat::kMean, Stat::kVar})
      benchmark::DoNotOptimize(ComputeStat(s, params, *summary, p, DType::kF8));
  }
}
BENCHMARK(BM_WarmQuery)->ArgName("minmax")->Arg(0)->Arg(1);

// A sparse f8 array deep enough for a query to take nodes at every level:
// 2^34 elements (128 GiB, sparse) with 64 regions of 2^16 random-walk cells,
// the default leaf (16,384), fan-out 64 and a 1 MiB RAM tier: levels of
// 2^20, 2^14, 256 and 4 nodes, the top two in RAM (as a 1 TiB array's
// default buffer keeps its top two of four). Made once, removed at exit.
struct DeepArray {
  static constexpr uint64_t kLength = uint64_t{1} << 34;
  static constexpr uint64_t kRegions = 64, kRegion = uint64_t{1} << 16;
  // The first cell of region r.
  static uint64_t RegionStart(uint64_t r) { return r * (kLength / kRegions) + 12345 * r; }
  static BenchArray& Get() {
    static BenchArray* instance = [] {
      BufferedArrayOptions options;
      options.io.direct = false;  // in-cache costs
      options.tree.ram_budget = 1 << 20;
      auto fill = [](ArrayFile& file) {
        for (uint64_t r = 0; r < kRegions; ++r) {
          const std::vector<double> v = RandomWalk(kRegion, 100 + r);
          MOMENTA_RETURN_IF_ERROR(file.WriteRaw(RegionStart(r), kRegion, reinterpret_cast<const char*>(v.data())));
        }
        return Status::OK();
      };
      return new BenchArray("deep", kLength, fill, options);
    }();
    return *instance;
  }
};

// `count` random ranges of the deep array: ends anywhere (mostly in holes),
// or both ends inside data regions (end pieces of real cells).
std::vector<IndexRange> DeepRanges(size_t count, bool ends_in_data, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<IndexRange> ranges(count);
  for (IndexRange& r : ranges) {
    uint64_t p, q;
    if (ends_in_data) {
      p = DeepArray::RegionStart(rng() % DeepArray::kRegions) + rng() % DeepArray::kRegion;
      q = DeepArray::RegionStart(rng() % DeepArray::kRegions) + rng() % DeepArray::kRegion;
    } else {
      p = rng() % DeepArray::kLength;
      q = rng() % DeepArray::kLength;
    }
    if (p > q) std::swap(p, q);
    r = {p, q + 1};
  }
  return ranges;
}

// Warm sum+mean+var over the deep array, one query at a time (the nodes of
// every level and the two end pieces; everything in the page cache).
void BM_WarmQueryDeep(benchmark::State& state) {
  BenchArray& deep = DeepArray::Get();
  if (!deep.error().empty()) {
    state.SkipWithError(deep.error().c_str());
    return;
  }
  const std::vector<IndexRange> ranges = DeepRanges(4096, state.range(0) != 0, 8);
  for (const IndexRange& r : ranges) (void)deep.array().Summarize(r.begin, r.end, false);  // warm
  size_t k = 0;
  QueryCost cost;
  for (auto _ : state) {
    const IndexRange& r = ranges[k++ % ranges.size()];
    QueryCost c;
    auto summary = deep.array().Summarize(r.begin, r.end, false, &c);
    if (!summary.ok()) {
      state.SkipWithError(summary.status().ToString().c_str());
      break;
    }
    cost += c;
    StatParams params;
    for (Stat s : {Stat::kSum, Stat::kMean, Stat::kVar})
      benchmark::DoNotOptimize(ComputeStat(s, params, *summary, r.begin, DType::kF8));
  }
  state.counters["ram_nodes"] = benchmark::Counter(static_cast<double>(cost.ram_nodes) / state.iterations());
  state.counters["tier_nodes"] =
      benchmark::Counter(static_cast<double>(cost.tier_bytes) / NodeCodec(2).bytes() / state.iterations());
}
BENCHMARK(BM_WarmQueryDeep)->ArgName("ends_in_data")->Arg(0)->Arg(1);

// Warm batches over the deep array (SummarizeBatch of `batch` ranges):
// items/s is ranges/s on one core.
void BM_WarmBatchDeep(benchmark::State& state) {
  BenchArray& deep = DeepArray::Get();
  if (!deep.error().empty()) {
    state.SkipWithError(deep.error().c_str());
    return;
  }
  const size_t batch = static_cast<size_t>(state.range(0));
  const std::vector<IndexRange> ranges = DeepRanges(batch, /*ends_in_data=*/true, 9);
  std::vector<RangeSummary> out;
  (void)deep.array().SummarizeBatch(ranges, false, &out);  // warm
  for (auto _ : state) {
    if (Status s = deep.array().SummarizeBatch(ranges, false, &out); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_WarmBatchDeep)->ArgName("batch")->Arg(1024);

// Warm single-element updates, `batch` per Apply.
void BM_WarmApply(benchmark::State& state) {
  BenchArray& small = SmallArray();
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
  BenchArray& small = SmallArray();
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
      case 0:
        s = array.ReadRaw(i, 1, bytes);
        break;
      case 1:
        s = array.WriteRaw(i, 1, bytes);
        break;
      case 2:
        s = array.io().Allocate(array.ByteOffset(i), 8);
        break;
      default:
        s = array.io().Write(array.ByteOffset(i), std::span<const char>(bytes, 8));
        break;
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
