// The sliding-window summarizer: how fast items go in, how much
// memory a window of 10^8 items takes, and what the site rules cost on the
// wire (words per window against the bounds and against the naive protocol
// that sends every arrival and expiry), with the quantile rules side by side.
//
//   stream_bench --benchmark_filter=Throughput   items/s into each synopsis
//   stream_bench --benchmark_filter=Memory       resident bytes at eps = 0.01, 10^8 items
//                                                (the summarizer, and a protocol site)
//   stream_bench --benchmark_filter=Comm         counts and frequent items: C and x naive
//   stream_bench --benchmark_filter=Quantile     drift vs whole-summary vs naive, crossover
// Traffic benchmarks run the simulation once (Iterations(1)); their figures
// are the counters. bench/README.md holds a measured run.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <vector>

#include "stream/testing/simulation.h"
#include "stream/window/summarizer.h"

namespace momenta {
namespace {

// Item ids with a heavy head and a long tail (about 8% of draws are one
// item, half fall among 100 of the 10^6 ids), made before any timing.
const std::vector<int64_t>& Items() {
  static const std::vector<int64_t> items = [] {
    std::mt19937_64 rng(42);
    std::vector<int64_t> v(1 << 22);
    for (int64_t& x : v) {
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      x = static_cast<int64_t>(std::pow(1e6, u * u)) * 7919 % 1000003;
    }
    return v;
  }();
  return items;
}

long ResidentBytes() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

// Feeds per_tick items per clock tick into a window that holds 10^6 items,
// first 1.2 windows untimed (steady state: items expire as they arrive),
// then for as long as the benchmark asks; reports items/s.
constexpr int64_t kWindowItems = 1000000;
template <class Feed>
void RunThroughput(benchmark::State& state, Feed&& feed) {
  const int64_t per_tick = state.range(0);
  const auto& items = Items();
  size_t k = 0;
  int64_t t = 0;
  for (; t < kWindowItems * 12 / 10 / per_tick; ++t)
    for (int64_t j = 0; j < per_tick; ++j) feed(t, items[k++ & (items.size() - 1)]);
  for (auto _ : state) {
    for (int64_t i = 0; i < (1 << 16); i += per_tick, ++t)
      for (int64_t j = 0; j < per_tick; ++j) feed(t, items[k++ & (items.size() - 1)]);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * (1 << 16));
}

constexpr double kEps = 0.01;
WindowSpec SpecFor(int64_t per_tick) { return {kWindowItems / per_tick, 0}; }

void BM_ThroughputCount(benchmark::State& state) {
  auto c = WindowCount::Create(SpecFor(state.range(0)), kEps);
  RunThroughput(state, [&](int64_t t, int64_t) { c->Update(t); });
}
void BM_ThroughputItems(benchmark::State& state) {
  auto c = ItemCounts::ForFrequentItems(SpecFor(state.range(0)), kEps);
  RunThroughput(state, [&](int64_t t, int64_t item) { c->Update(t, item); });
}
void BM_ThroughputQuantiles(benchmark::State& state) {
  auto c = WindowQuantiles::Create(SpecFor(state.range(0)), kEps);
  RunThroughput(state, [&](int64_t t, int64_t item) { c->Update(t, item); });
}
void BM_ThroughputSummarizer(benchmark::State& state) {
  auto s = Summarizer::Create(SpecFor(state.range(0)), kEps);
  RunThroughput(state, [&](int64_t t, int64_t item) { s->Add(t, item); });
}
// A site running basic counting and frequent items (BC eps/24, AC 11eps/24)
// including the rules' checks after every tick.
void BM_ThroughputSiteCounts(benchmark::State& state) {
  SiteOptions o;
  o.spec = SpecFor(state.range(0));
  o.eps = kEps;
  o.quantile_drift = false;
  auto site = Site::Create(0, o);
  const int64_t per_tick = state.range(0);
  const auto& items = Items();
  std::vector<Arrival> batch;
  std::vector<Message> out;
  size_t k = 0;
  int64_t t = 0;
  auto tick = [&] {
    batch.clear();
    for (int64_t j = 0; j < per_tick; ++j) batch.push_back({t, items[k++ & (items.size() - 1)]});
    out.clear();
    (*site)->Tick(t++, batch, &out);
  };
  while (t < kWindowItems * 12 / 10 / per_tick) tick();
  uint64_t messages = 0;
  for (auto _ : state) {
    for (int64_t i = 0; i < (1 << 16); i += per_tick) {
      tick();
      messages += out.size();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * (1 << 16));
  state.counters["messages_per_tick"] =
      static_cast<double>(messages) / (static_cast<double>(state.iterations()) * (1 << 16) / per_tick);
}
#define THROUGHPUT(f) BENCHMARK(f)->ArgName("items_per_tick")->Arg(1)->Arg(10)->Arg(100)->Arg(1000)->MinTime(2)
THROUGHPUT(BM_ThroughputCount);
THROUGHPUT(BM_ThroughputItems);
THROUGHPUT(BM_ThroughputQuantiles);
THROUGHPUT(BM_ThroughputSummarizer);
THROUGHPUT(BM_ThroughputSiteCounts);

// The summarizer at eps = 0.01 holding 10^8 items (1000 per tick, W = 10^5
// ticks, or one per tick, W = 10^8, where every bucket starts young; run for
// 1.3 windows so that expiry and the straddling bucket are in play): its own
// accounting and the process's resident growth.
void BM_MemorySummarizer(benchmark::State& state) {
  const int64_t per_tick = state.range(1), window = state.range(0) / per_tick;
  const auto& items = Items();  // made before measuring
  for (auto _ : state) {
    const long before = ResidentBytes();
    auto s = Summarizer::Create({window, 0}, kEps);
    size_t k = 0;
    for (int64_t t = 0; t < window * 13 / 10; ++t)
      for (int64_t j = 0; j < per_tick; ++j) s->Add(t, items[k++ & (items.size() - 1)]);
    state.counters["window_items"] = s->Report(0, {}).count;
    state.counters["synopsis_MiB"] = static_cast<double>(s->MemoryBytes()) / (1 << 20);
    state.counters["items_MiB"] = static_cast<double>(s->items().MemoryBytes()) / (1 << 20);
    state.counters["quantiles_MiB"] = static_cast<double>(s->quantiles().MemoryBytes()) / (1 << 20);
    state.counters["rss_growth_MiB"] = static_cast<double>(ResidentBytes() - before) / (1 << 20);
    state.counters["rank_err_over_eps_c"] = s->quantiles().RankErrorBound() / (kEps * s->quantiles().Count());
    state.counters["item_err_over_eps_c"] = s->items().ErrorBound() / (kEps * s->items().Count());
    state.counters["quantile_entries"] = static_cast<double>(s->quantiles().entry_count());
    state.counters["over_budget_collapses"] = static_cast<double>(s->quantiles().over_budget_collapses());
  }
}
BENCHMARK(BM_MemorySummarizer)
    ->ArgNames({"window_items", "items_per_tick"})
    ->Args({100000000, 1000})
    ->Args({100000000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// A protocol site aiming at eps = 0.01 at the root, 10^8 items in the window
// (same stream as above): the synopses a Site keeps (site.h: WindowCount at
// eps/72 for basic counting, ItemCounts at 0.35 * 11 eps / 24 for approximate
// counting, WindowQuantiles at 0.3 eps and WindowCount at 0.02 eps for the
// drift rule), each fed every item, with the basic- and approximate-counting
// rules checked every tick as Site::Tick does. The drift rule checks once, at
// the end (at this scale a check sorts the whole window's sample: run every
// 0.1 eps S changes it would take the benchmark hours); its snapshot is
// transient and counted apart. Memory as Site::MemoryBytes counts it, and the
// process's resident growth.
void BM_MemorySite(benchmark::State& state) {
  const int64_t per_tick = 1000, window = state.range(0) / per_tick;
  const auto& items = Items();
  for (auto _ : state) {
    const long before = ResidentBytes();
    const WindowSpec spec{window, 0};
    BasicCountSite bc(BasicCountEps(kEps));
    ApproxCountSite ac(ApproxCountAlpha(kEps));
    QuantileDriftSite drift(kEps);
    auto bc_count = WindowCount::Create(spec, bc.synopsis_eps());
    auto ic = ItemCounts::Create(spec, ac.synopsis_eps());
    auto q = WindowQuantiles::Create(spec, drift.synopsis_eps());
    auto dc = WindowCount::Create(spec, drift.count_eps());
    ic->TrackTouched(true);
    std::vector<Message> out;
    size_t k = 0;
    uint64_t messages = 0;
    int64_t t = 0;
    for (; t < window * 13 / 10; ++t) {
      bc_count->AdvanceTo(t);
      ic->AdvanceTo(t);
      q->AdvanceTo(t);
      dc->AdvanceTo(t);
      for (int64_t j = 0; j < per_tick; ++j) {
        const int64_t item = items[k++ & (items.size() - 1)];
        bc_count->Update(t);
        ic->Update(t, item);
        q->Update(t, item);
        dc->Update(t);
      }
      out.clear();
      messages += bc.Observe(bc_count->Estimate()) != 0;
      ac.Check(*ic, 0, t, &out);
      messages += out.size();
    }
    const long synopses_resident = ResidentBytes() - before;
    size_t snapshot_bytes = 0;  // what one drift check builds and frees
    {
      const RankSnapshot snap = q->Snapshot();
      snapshot_bytes = snap.values().size() * 2 * sizeof(double);
    }
    out.clear();
    drift.Check(*q, *dc, static_cast<uint64_t>(per_tick), 0, t - 1, &out);
    const size_t site = bc_count->MemoryBytes() + ic->MemoryBytes() + ac.on_count() * 48 + q->MemoryBytes() +
                        dc->MemoryBytes() + drift.boundary_count() * 48;
    state.counters["window_items"] = ic->Count();
    state.counters["site_MiB"] = static_cast<double>(site) / (1 << 20);
    state.counters["bc_count_MiB"] = static_cast<double>(bc_count->MemoryBytes()) / (1 << 20);
    state.counters["ac_items_MiB"] = static_cast<double>(ic->MemoryBytes()) / (1 << 20);
    state.counters["drift_quantiles_MiB"] = static_cast<double>(q->MemoryBytes()) / (1 << 20);
    state.counters["drift_count_MiB"] = static_cast<double>(dc->MemoryBytes()) / (1 << 20);
    state.counters["snapshot_MiB"] = static_cast<double>(snapshot_bytes) / (1 << 20);
    state.counters["rss_growth_MiB"] = static_cast<double>(synopses_resident) / (1 << 20);
    state.counters["rss_growth_after_check_MiB"] = static_cast<double>(ResidentBytes() - before) / (1 << 20);
    state.counters["item_err_over_budget"] = ic->ErrorBound() / (ic->item_eps() * ic->Count());
    state.counters["rank_err_over_budget"] = q->RankErrorBound() / (q->eps() * q->Count());
    state.counters["sample_entries"] = static_cast<double>(q->entry_count());
    state.counters["item_buckets"] = static_cast<double>(ic->bucket_count());
    state.counters["messages"] = static_cast<double>(messages + out.size());
  }
}
BENCHMARK(BM_MemorySite)->ArgName("window_items")->Arg(100000000)->Iterations(1)->Unit(benchmark::kSecond);

// Basic counting and frequent items on the wire: max over ticks of words in
// the window over (k/eps) log2(N/k) (C), and the steady windows' naive words
// (N = arrivals + expiries) over the protocol's.
void BM_CommCounts(benchmark::State& state) {
  SimulationOptions o;
  o.site.eps = static_cast<double>(state.range(0)) / 1000;
  o.sites = static_cast<uint32_t>(state.range(1));
  const double per_window = static_cast<double>(state.range(2));
  o.site.spec = {1000, 0};
  o.site.quantile_drift = false;
  o.rate = per_window / 1000 / o.sites;
  o.workload = state.range(3) == 0 ? "steady" : "square";
  o.ticks = 4000;
  o.check = false;
  for (auto _ : state) {
    auto r = RunSimulation(o);
    // C is measured against (k/eps') log2(N/k) with eps' the rule's own
    // target: eps/24 for basic counting, eps for approximate counting (and
    // frequent items, whose words are BC's plus AC's: C_fi <= 24 C_bc + C_ac).
    const auto& bc = r->window[static_cast<int>(Protocol::kBasicCount)];
    const auto& ac = r->window[static_cast<int>(Protocol::kApproxCount)];
    state.counters["bc_C"] = bc.max_ratio / 24;
    state.counters["ac_C"] = ac.max_ratio;
    state.counters["fi_C"] = bc.max_ratio + ac.max_ratio;
    state.counters["bc_max_words"] = static_cast<double>(bc.max_words);
    state.counters["ac_max_words"] = static_cast<double>(ac.max_words);
    state.counters["bc_x_naive"] = bc.steady_naive_ratio;
    state.counters["ac_x_naive"] = ac.steady_naive_ratio;
    // The worst window (the first filling up): naive words over BC + AC words.
    state.counters["fi_worst_x_naive"] = 2 * per_window / static_cast<double>(bc.max_words + ac.max_words);
    // BC is charged in bits: Elias-gamma bits per message.
    const auto& bt = r->total[static_cast<int>(Protocol::kBasicCount)];
    state.counters["bc_bits_per_msg"] =
        bt.messages ? static_cast<double>(bt.bits) / static_cast<double>(bt.messages) : 0;
  }
}
BENCHMARK(BM_CommCounts)
    ->ArgNames({"eps_milli", "k", "window_items", "square"})
    ->ArgsProduct({{100, 50, 10}, {1, 4}, {10000, 100000, 1000000}, {0}})
    ->Args({10, 4, 1000000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Quantiles side by side on the same stream: the drift rule, the
// whole-summary rule, and naive (one word per arrival and per expiry), in
// words per window (mean over the last window's ticks). A site sends at most
// one summary per tick, so with few ticks per window the whole-summary rule
// is capped below its 400/eps^2 words: the crossover runs use 2000 ticks.
void BM_QuantileTraffic(benchmark::State& state) {
  static const char* const kWorkloads[] = {"steady", "square", "increasing", "alternating", "noise", "rotation"};
  SimulationOptions o;
  o.workload = kWorkloads[state.range(0)];
  o.site.eps = static_cast<double>(state.range(1)) / 1000;
  const double per_window = static_cast<double>(state.range(2));
  const int64_t window = state.range(3);
  o.site.spec = {window, 0};
  o.site.basic_count = false;
  o.site.approx_count = false;
  o.site.quantile_summary = true;
  o.rate = per_window / static_cast<double>(window);
  o.ticks = 4 * window;
  o.check = false;
  state.SetLabel(o.workload);
  for (auto _ : state) {
    auto r = RunSimulation(o);
    const double N = 2 * per_window;  // arrivals + expiries per window, steady
    const auto& d = r->window[static_cast<int>(Protocol::kQuantileDrift)];
    const auto& s = r->window[static_cast<int>(Protocol::kQuantileSummary)];
    const double drift_words = d.steady_naive_ratio > 0 ? N / d.steady_naive_ratio : 0;
    const double summary_words = s.steady_naive_ratio > 0 ? N / s.steady_naive_ratio : 0;
    state.counters["naive_words"] = N;
    state.counters["summary_words"] = summary_words;
    state.counters["drift_words"] = drift_words;
    state.counters["summary_x_drift"] = drift_words > 0 ? summary_words / drift_words : 0;
    state.counters["summary_over_naive"] = summary_words / N;
    state.counters["drift_max_over_summary_max"] =
        s.max_words ? static_cast<double>(d.max_words) / static_cast<double>(s.max_words) : 0;
  }
}
BENCHMARK(BM_QuantileTraffic)
    ->ArgNames({"workload", "eps_milli", "window_items", "ticks"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {50}, {20000}, {200}})
    ->ArgsProduct({{0, 2, 3}, {10}, {100000}, {200}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Where the whole-summary rule stops costing more than naive: its words per
// window over naive's, for growing windows (about 200/eps^2 items expected).
BENCHMARK(BM_QuantileTraffic)
    ->Name("BM_QuantileCrossover")
    ->ArgNames({"workload", "eps_milli", "window_items", "ticks"})
    ->ArgsProduct({{0}, {100}, {2000, 8000, 32000, 128000}, {2000}})
    ->ArgsProduct({{0}, {50}, {8000, 32000, 128000}, {2000}})
    ->ArgsProduct({{4}, {100}, {8000, 32000}, {2000}})
    ->ArgsProduct({{4}, {50}, {32000, 128000}, {2000}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace momenta

BENCHMARK_MAIN();
