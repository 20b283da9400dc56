// Fuzz target `synopsis`: the decoders of the three window synopses'
// snapshots (WindowCount, ItemCounts, WindowQuantiles ::Decode; layout in
// stream/window/bucket_codec.h), and the decoded synopses' queries and updates.
//
// Input: the bytes of one encoding (the first 1024); each decoder is tried
// (the magic picks the one that may accept). After a successful decode:
//   - the answers keep the bounds the decoded state implies: CountLow <=
//     Count <= CountHigh; an item's estimate within its Bounds, the bounds'
//     lows summing to at most CountHigh, Frequent and Top sorted, unique and
//     equal to Estimate, above Frequent's threshold; quantiles nondecreasing
//     in phi and among the sampled values, Rank nondecreasing, the rank
//     snapshot ascending;
//   - re-encoding gives bytes that decode to the same answers and re-encode
//     to themselves (the encoding of a state is canonical);
//   - the decoded synopsis keeps working: advanced and updated a few times
//     (an arrival now, a late one within tau, one too late, a clock past the
//     whole window) it keeps the bounds above, asserts nothing (asserts are
//     on in the fuzz build), and its encoding still decodes.
// Seeds (tests/data/fuzz/synopsis/): the v1 golden files of tests/data/
// (golden_window_count_v1.bin, golden_item_counts_v1.bin,
// golden_window_quantiles_v1.bin, written by tests/stream/stream_golden_test.cc's
// recipe), and small states this target writes when the environment
// variable MOMENTA_WRITE_FUZZ_SEEDS names a folder (run fuzz_replay_synopsis
// on any input with it set): each synopsis empty, holding one item, and fed
// a short stream with late arrivals at eps 0.3 (few buckets, merged).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "stream/window/window_spec.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace momenta;

// Slack for sums of doubles that are exact in honest states.
constexpr double kSlack = 1e-6;

template <class S>
void CheckCountBounds(const S& s) {
  FUZZ_CHECK(static_cast<double>(s.CountLow()) <= s.Count() + kSlack, "count below its low bound");
  FUZZ_CHECK(s.Count() <= static_cast<double>(s.CountHigh()) + kSlack, "count above its high bound");
}

// Clocks for the updates after decoding: now + 1 (or 0 before any clock),
// clamped to kMaxTime.
int64_t After(int64_t now, int64_t step) {
  if (now <= -kMaxTime) return std::min<int64_t>(0, kMaxTime);
  return now > kMaxTime - step ? kMaxTime : now + step;
}

// ---- WindowCount --------------------------------------------------------

void CheckWindowCount(const WindowCount& c) {
  FUZZ_CHECK(static_cast<double>(c.Low()) <= c.Estimate() + kSlack, "estimate below Low");
  FUZZ_CHECK(c.Estimate() <= static_cast<double>(c.High()) + kSlack, "estimate above High");
}

void FuzzWindowCount(std::string_view bytes) {
  auto c = WindowCount::Decode(bytes);
  if (!c.ok()) return;
  CheckWindowCount(*c);
  const std::string again = c->Encode();
  auto d = WindowCount::Decode(again);
  FUZZ_CHECK(d.ok(), d.status().ToString().c_str());
  FUZZ_CHECK(d->Encode() == again, "window count: encoding not canonical");
  FUZZ_CHECK(d->Estimate() == c->Estimate() && d->Low() == c->Low() && d->High() == c->High(),
             "window count: re-decoded answers differ");
  WindowCount& w = *d;
  const WindowSpec spec = w.spec();
  int64_t t = After(w.now(), 1);
  w.AdvanceTo(t);
  w.Update(t);
  w.Update(std::max(-kMaxTime, t - spec.tardiness));
  if (t - spec.tardiness - 1 >= -kMaxTime) w.Update(t - spec.tardiness - 1, 3);  // too late: dropped
  CheckWindowCount(w);
  t = After(t, spec.window / 2 + 1);
  w.AdvanceTo(t);
  CheckWindowCount(w);
  t = After(t, spec.window + 1);
  w.AdvanceTo(t);
  CheckWindowCount(w);
  if (t < kMaxTime) FUZZ_CHECK(w.High() == 0, "window count: items left after the whole window passed");
  auto e = WindowCount::Decode(w.Encode());
  FUZZ_CHECK(e.ok(), e.status().ToString().c_str());
}

// ---- ItemCounts ---------------------------------------------------------

void CheckItemCounts(const ItemCounts& c) {
  CheckCountBounds(c);
  FUZZ_CHECK(c.ErrorBound() >= 0, "negative error bound");
  std::vector<int64_t> items;
  c.ForEachCandidate([&](int64_t item) { items.push_back(item); });
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  double lows = 0;
  for (int64_t j : items) {
    const ItemBounds b = c.Bounds(j);
    const double est = c.Estimate(j);
    FUZZ_CHECK(b.low >= 0 && b.low <= est + kSlack && est <= b.high + kSlack, "estimate outside its bounds");
    lows += b.low;
  }
  FUZZ_CHECK(lows <= static_cast<double>(c.CountHigh()) + kSlack, "items' low counts exceed the window's count");
  auto sorted_unique = [&](const std::vector<ItemEstimate>& v) {
    for (size_t k = 0; k < v.size(); ++k) {
      FUZZ_CHECK(v[k].count == c.Estimate(v[k].item), "listed count differs from Estimate");
      if (k > 0)
        FUZZ_CHECK(v[k - 1].count > v[k].count || (v[k - 1].count == v[k].count && v[k - 1].item < v[k].item),
                   "list not sorted by count, then item");
    }
    std::vector<int64_t> ids;
    for (const ItemEstimate& e : v) ids.push_back(e.item);
    std::sort(ids.begin(), ids.end());
    FUZZ_CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end(), "an item listed twice");
  };
  for (double phi : {1.0, 0.5, 0.2}) {
    const auto f = c.Frequent(phi);
    sorted_unique(f);
    for (const ItemEstimate& e : f)
      FUZZ_CHECK(e.count >= (phi - 1.5 * c.item_eps()) * c.Count() - kSlack, "frequent item below the threshold");
  }
  const auto top = c.Top(5);
  FUZZ_CHECK(top.size() <= 5 && top.size() <= items.size(), "Top lists too many");
  sorted_unique(top);
}

void FuzzItemCounts(std::string_view bytes) {
  auto c = ItemCounts::Decode(bytes);
  if (!c.ok()) return;
  CheckItemCounts(*c);
  const std::string again = c->Encode();
  auto d = ItemCounts::Decode(again);
  FUZZ_CHECK(d.ok(), d.status().ToString().c_str());
  FUZZ_CHECK(d->Encode() == again, "item counts: encoding not canonical");
  FUZZ_CHECK(d->Count() == c->Count(), "item counts: re-decoded count differs");
  c->ForEachCandidate(
      [&](int64_t j) { FUZZ_CHECK(d->Estimate(j) == c->Estimate(j), "item counts: re-decoded estimate differs"); });
  ItemCounts& w = *d;
  const WindowSpec spec = w.spec();
  int64_t t = After(w.now(), 1);
  w.AdvanceTo(t);
  w.Update(t, 7);
  w.Update(t, -3, 2);
  w.Update(std::max(-kMaxTime, t - spec.tardiness), 7);
  if (t - spec.tardiness - 1 >= -kMaxTime) w.Update(t - spec.tardiness - 1, 9);  // too late: dropped
  CheckItemCounts(w);
  t = After(t, spec.window / 2 + 1);
  w.AdvanceTo(t);
  w.Update(t, 7);
  CheckItemCounts(w);
  t = After(t, spec.window + 1);
  w.AdvanceTo(t);
  CheckItemCounts(w);
  auto e = ItemCounts::Decode(w.Encode());
  FUZZ_CHECK(e.ok(), e.status().ToString().c_str());
}

// ---- WindowQuantiles ----------------------------------------------------

void CheckQuantiles(const WindowQuantiles& q) {
  CheckCountBounds(q);
  FUZZ_CHECK(q.RankErrorBound() >= 0, "negative rank error bound");
  const RankSnapshot snap = q.Snapshot();
  const auto& values = snap.values();
  for (size_t k = 1; k < values.size(); ++k) FUZZ_CHECK(values[k - 1] < values[k], "snapshot values not ascending");
  double prev_rank = snap.Rank(INT64_MIN);
  FUZZ_CHECK(prev_rank >= -kSlack, "negative rank");
  for (int64_t v : values) {
    const double r = snap.Rank(v);
    FUZZ_CHECK(r + kSlack >= prev_rank && snap.RankBelow(v) <= r + kSlack, "snapshot rank decreasing");
    prev_rank = r;
  }
  FUZZ_CHECK(snap.Rank(INT64_MAX) + kSlack >= prev_rank, "snapshot rank decreasing at the end");
  FUZZ_CHECK(std::abs(snap.Rank(INT64_MAX) - snap.total()) <= kSlack * (1 + snap.total()), "rank of max != total");
  std::optional<int64_t> prev;
  for (double phi : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const auto v = q.Quantile(phi);
    FUZZ_CHECK(v.has_value() == !snap.empty(), "quantile of an empty window, or none of a full one");
    if (!v) continue;
    FUZZ_CHECK(std::binary_search(values.begin(), values.end(), *v), "quantile not among the sampled values");
    FUZZ_CHECK(!prev || *prev <= *v, "quantiles decreasing in phi");
    prev = v;
  }
  const int64_t probes[] = {INT64_MIN, -1, 0, 1, INT64_MAX};
  double last = -1;
  for (int64_t x : probes) {
    const double r = q.Rank(x);
    FUZZ_CHECK(r + kSlack >= last, "Rank decreasing");
    last = r;
  }
}

void FuzzQuantiles(std::string_view bytes) {
  auto c = WindowQuantiles::Decode(bytes);
  if (!c.ok()) return;
  CheckQuantiles(*c);
  const std::string again = c->Encode();
  auto d = WindowQuantiles::Decode(again);
  FUZZ_CHECK(d.ok(), d.status().ToString().c_str());
  FUZZ_CHECK(d->Encode() == again, "window quantiles: encoding not canonical");
  FUZZ_CHECK(d->Count() == c->Count(), "window quantiles: re-decoded count differs");
  for (double phi : {0.0, 0.5, 1.0})
    FUZZ_CHECK(d->Quantile(phi) == c->Quantile(phi), "window quantiles: re-decoded quantile differs");
  WindowQuantiles& w = *d;
  const WindowSpec spec = w.spec();
  int64_t t = After(w.now(), 1);
  w.AdvanceTo(t);
  w.Update(t, 5);
  w.Update(t, INT64_MIN, 2);
  w.Update(std::max(-kMaxTime, t - spec.tardiness), INT64_MAX);
  if (t - spec.tardiness - 1 >= -kMaxTime) w.Update(t - spec.tardiness - 1, 9);  // too late: dropped
  CheckQuantiles(w);
  t = After(t, spec.window / 2 + 1);
  w.AdvanceTo(t);
  w.Update(t, -5);
  CheckQuantiles(w);
  t = After(t, spec.window + 1);
  w.AdvanceTo(t);
  CheckQuantiles(w);
  auto e = WindowQuantiles::Decode(w.Encode());
  FUZZ_CHECK(e.ok(), e.status().ToString().c_str());
}

// ---- seeds --------------------------------------------------------------

void WriteSeed(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

template <class S>
void WriteStates(const std::string& dir, const std::string& name) {
  const WindowSpec spec{8, 2};
  auto empty = S::Create(spec, 0.3);
  WriteSeed(dir + "/seed-" + name + "_empty", empty->Encode());
  auto one = S::Create(spec, 0.3);
  if constexpr (std::is_same_v<S, WindowCount>)
    one->Update(5);
  else
    one->Update(5, 11);
  WriteSeed(dir + "/seed-" + name + "_one", one->Encode());
  auto stream = S::Create(spec, 0.3);
  for (int64_t t = 0; t < 20; ++t) {
    stream->AdvanceTo(t);
    for (int64_t j = 0; j < 3; ++j) {
      const int64_t ts = t - j % 3;  // late by up to tau
      if constexpr (std::is_same_v<S, WindowCount>)
        stream->Update(ts);
      else
        stream->Update(ts, (t + j) % 4 - 1);
    }
  }
  WriteSeed(dir + "/seed-" + name + "_stream", stream->Encode());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("MOMENTA_WRITE_FUZZ_SEEDS"); dir != nullptr && *dir != 0) {
    WriteStates<WindowCount>(dir, "window_count");
    WriteStates<ItemCounts>(dir, "item_counts");
    WriteStates<WindowQuantiles>(dir, "window_quantiles");
    std::fprintf(stderr, "synopsis: seeds written to %s\n", dir);
    std::exit(0);
  }
  return 0;
}

// The golden states take ~400 bytes; longer encodings add buckets that reach
// no new code and only slow the target down.
constexpr size_t kMaxInput = 1024;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), std::min(size, kMaxInput));
  FuzzWindowCount(bytes);
  FuzzItemCounts(bytes);
  FuzzQuantiles(bytes);
  return 0;
}
