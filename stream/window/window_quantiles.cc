#include "stream/window/window_quantiles.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "stream/window/bucket_codec.h"
#include "stream/window/byte_codec.h"

namespace momenta {

namespace {
constexpr char kMagic[] = "MWQNT1";  // window quantiles, encoding v1
constexpr double kLambda = 0.8;      // straddler share, times eps
constexpr double kGamma = 0.5;       // per-bucket sample error, times eps
constexpr double kEntriesPerGamma = 2;
constexpr size_t kRawFactor = 8;     // raw arrivals absorbed past 8m
constexpr size_t kCapFactor = 32;    // entries per bucket never exceed 32m
constexpr size_t kYoungItems = 256;  // the most items a young bucket holds (when 2m allows)

PackedPairs Pack(const std::vector<ValueEntry>& e) {
  return PackedPairs::Pack(
      e.size(), [&](size_t i) { return e[i].value; }, [&](size_t i) { return e[i].weight; });
}

void AppendPacked(const PackedPairs& p, std::vector<ValueEntry>* e) {
  p.ForEach([&](int64_t value, uint32_t weight) { e->push_back({value, weight}); });
}

// Sum of weights of values <= x.
uint64_t PackedRank(const PackedPairs& p, int64_t x) {
  uint64_t r = 0;
  for (size_t i = 0; i < p.size() && p.key(i) <= x; ++i) r += p.count(i);
  return r;
}
}  // namespace

double RankSnapshot::Rank(int64_t x) const {
  auto it = std::upper_bound(values_.begin(), values_.end(), x);
  return it == values_.begin() ? 0 : cum_[static_cast<size_t>(it - values_.begin()) - 1];
}

double RankSnapshot::RankBelow(int64_t x) const {
  auto it = std::lower_bound(values_.begin(), values_.end(), x);
  return it == values_.begin() ? 0 : cum_[static_cast<size_t>(it - values_.begin()) - 1];
}

std::optional<int64_t> RankSnapshot::ValueAtRank(double target) const {
  if (values_.empty()) return std::nullopt;
  auto it = std::lower_bound(cum_.begin(), cum_.end(), target);
  if (it == cum_.end()) return values_.back();
  return values_[static_cast<size_t>(it - cum_.begin())];
}

WindowQuantiles::WindowQuantiles(const WindowSpec& spec, double eps)
    : eps_(eps),
      gamma_(kGamma * eps),
      m_(static_cast<size_t>(std::ceil(kEntriesPerGamma / (kGamma * eps)))),
      w_(spec, kLambda * eps),
      young_items_(std::min(2 * m_, kYoungItems)) {}

Result<WindowQuantiles> WindowQuantiles::Create(const WindowSpec& spec, double eps) {
  MOMENTA_RETURN_IF_ERROR(ValidateWindowSpec(spec));
  MOMENTA_RETURN_IF_ERROR(CheckEps(eps, "window quantiles"));
  return WindowQuantiles(spec, eps);
}

double WindowQuantiles::Tidy(Bucket& b) {
  Payload& p = b.payload;
  if (!p.raw.empty()) {
    p.entries.insert(p.entries.end(), p.raw.begin(), p.raw.end());
    std::vector<ValueEntry>().swap(p.raw);
    NormalizeSample(&p.entries, &sort_words_);
  }
  return Collapse(&p.entries, b.n, b.err);
}

// The threshold, for a sample of more than 2m entries (m = ceil(2/gamma),
// gamma = eps/2) over n items with error err so far:
//   T = min(2n/m, 2·(gamma·n − err))   (<= 2n/T + 1 entries stay, m + 1 at T = 2n/m;
//                                       the error added, <= T/2, stays within gamma·n)
//   T = n/m when more than 32m entries and T < n/m   (the cap, over budget)
// and nothing is collapsed when T < 2.
double WindowQuantiles::Collapse(std::vector<ValueEntry>* e, uint64_t items, double err) {
  if (e->size() <= 2 * m_) return 0;
  const double n = static_cast<double>(items);
  const double budget = gamma_ * n - err;
  double T = std::min(2 * n / static_cast<double>(m_), 2 * budget);
  if (e->size() > kCapFactor * m_ && T < n / static_cast<double>(m_)) {
    T = n / static_cast<double>(m_);  // the cap: at most 2m + 1 entries remain
    ++over_budget_;
  }
  if (T < 2) return 0;
  return CollapseSample(e, T);
}

void WindowQuantiles::YoungSample(const Payload& p, std::vector<ValueEntry>* e, std::vector<uint64_t>* scratch) const {
  e->assign(young_.begin(p.young), young_.end(p.young));
  NormalizeSample(e, scratch);
}

void WindowQuantiles::Hooks::Seal(Bucket& b, bool) {
  Payload& p = b.payload;
  if (b.n <= self->young_items_ && b.err == 0) {  // exact and small: young, unsorted
    YoungLog<ValueEntry>& log = self->young_;
    log.Trim([&](auto&& f) { self->w_.ForEachFullMutable([&](Bucket& x) { f(x.payload.young); }); });
    log.Open(&p.young);
    for (const ValueEntry& v : p.entries) log.Push(v);
    for (const ValueEntry& v : p.raw) log.Push(v);
    log.Close(&p.young);
    std::vector<ValueEntry>().swap(p.entries);
    std::vector<ValueEntry>().swap(p.raw);
    return;
  }
  b.err += self->Tidy(b);
  p.packed = Pack(p.entries);
  std::vector<ValueEntry>().swap(p.entries);
}

void WindowQuantiles::Hooks::Detach(Bucket& b) {
  // It may straddle: Rank and Snapshot read a straddler's packed sample.
  if (!b.payload.young.young()) return;
  self->YoungSample(b.payload, &self->work_, &self->sort_words_);
  b.payload.packed = Pack(self->work_);
  self->young_.Release(&b.payload.young);
}

void WindowQuantiles::Hooks::MergeGroup(Bucket* const* members, size_t count, Bucket& out) {
  if (YoungLog<ValueEntry>::MergeYoung(members, count, self->young_items_, out)) return;
  std::vector<ValueEntry>& e = self->work_;
  e.clear();
  double err = 0;
  for (size_t i = 0; i < count; ++i) {
    Payload& p = members[i]->payload;
    if (p.young.young()) {
      e.insert(e.end(), self->young_.begin(p.young), self->young_.end(p.young));
      self->young_.Release(&p.young);
    } else {
      AppendPacked(p.packed, &e);
    }
    err += members[i]->err;
  }
  NormalizeSample(&e, &self->sort_words_);
  out.err = err + self->Collapse(&e, out.n, err);
  out.payload.packed = Pack(e);
}

void WindowQuantiles::AdvanceTo(int64_t t) {
  Hooks h{this};
  w_.AdvanceTo(t, h);
}

bool WindowQuantiles::Update(int64_t ts, int64_t value, uint64_t count) {
  assert(count >= 1 && count <= kMaxBucketItems);
  if (ts > w_.now()) AdvanceTo(ts);
  if (!AcceptsArrival(w_.spec(), w_.now(), ts)) {
    dropped_ += count;
    return false;
  }
  Hooks h{this};
  Bucket& b = w_.Insert(ts, count, h);
  b.payload.raw.push_back({value, static_cast<uint32_t>(count)});
  if (b.payload.raw.size() > kRawFactor * m_) w_.AddErr(b, Tidy(b));
  return true;
}

double WindowQuantiles::Rank(int64_t x) const {
  double r = 0;
  auto rank_of = [&](const Payload& p) {
    uint64_t s = PackedRank(p.packed, x) + SampleRank(p.entries, x);
    for (const ValueEntry& v : p.raw)
      if (v.value <= x) s += v.weight;
    if (p.young.young())
      for (const ValueEntry* v = young_.begin(p.young); v != young_.end(p.young); ++v)
        if (v->value <= x) s += v->weight;
    return static_cast<double>(s);
  };
  w_.ForEachFull([&](const Bucket& b) { r += rank_of(b.payload); });
  if (const Bucket* s = w_.straddler()) r += 0.5 * rank_of(s->payload);
  return r;
}

double WindowQuantiles::RankErrorBound() const {
  double e = w_.full_err();
  if (const Bucket* s = w_.straddler()) e += 0.5 * (static_cast<double>(s->n) + s->err);
  return e;
}

RankSnapshot WindowQuantiles::Snapshot() const {
  // A k-way merge of the buckets' samples (each sorted by value), so the
  // only memory it takes beyond the result is one cursor per bucket.
  struct Source {
    const PackedPairs* p;
    double scale;
    size_t i;
  };
  std::vector<PackedPairs> loose;    // unsettled and young buckets' samples, packed for the merge
  loose.reserve(w_.bucket_count());  // src points into it: no reallocation
  std::vector<Source> src;
  src.reserve(w_.bucket_count());
  auto add = [&](const Payload& p, double scale) {
    if (!p.entries.empty() || !p.raw.empty()) {
      std::vector<ValueEntry> e = p.entries;
      e.insert(e.end(), p.raw.begin(), p.raw.end());
      NormalizeSample(&e);
      loose.push_back(Pack(e));
      src.push_back({&loose.back(), scale, 0});
    }
    if (p.young.young()) {
      std::vector<ValueEntry> e;
      YoungSample(p, &e, nullptr);
      loose.push_back(Pack(e));
      src.push_back({&loose.back(), scale, 0});
    }
    if (!p.packed.empty()) src.push_back({&p.packed, scale, 0});
  };
  w_.ForEachFull([&](const Bucket& b) { add(b.payload, 1.0); });
  if (const Bucket* s = w_.straddler()) add(s->payload, 0.5);
  // A binary min-heap of (next value, source).
  using Head = std::pair<int64_t, size_t>;
  std::vector<Head> heap;
  heap.reserve(src.size());
  for (size_t k = 0; k < src.size(); ++k) heap.push_back({src[k].p->key(0), k});
  auto greater = [](const Head& a, const Head& b) { return a > b; };
  std::make_heap(heap.begin(), heap.end(), greater);
  auto sift_down = [&] {
    const size_t n = heap.size();
    size_t i = 0;
    const Head top = heap[0];
    while (true) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && heap[c + 1] < heap[c]) ++c;
      if (!(heap[c] < top)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = top;
  };
  RankSnapshot snap;
  double cum = 0;  // sums of integers and halves: exact in any order
  while (!heap.empty()) {
    const auto [value, k] = heap[0];
    Source& x = src[k];
    cum += x.scale * x.p->count(x.i);
    if (++x.i < x.p->size()) {
      heap[0] = {x.p->key(x.i), k};
    } else {
      heap[0] = heap.back();
      heap.pop_back();
    }
    if (!heap.empty()) sift_down();
    if (heap.empty() || heap[0].first != value) {
      snap.values_.push_back(value);
      snap.cum_.push_back(cum);
    }
  }
  return snap;
}

std::optional<int64_t> WindowQuantiles::Quantile(double phi) const {
  assert(phi >= 0 && phi <= 1);
  RankSnapshot s = Snapshot();
  return s.ValueAtRank(phi * s.total());
}

size_t WindowQuantiles::entry_count() const {
  size_t n = 0;
  for (const Bucket& b : w_.settled()) n += b.payload.packed.size();
  for (const Bucket& b : w_.unsettled()) n += b.payload.entries.size() + b.payload.raw.size();
  return n + young_.live();
}

size_t WindowQuantiles::MemoryBytes() const {
  size_t bytes = sizeof(*this) + w_.ShellBytes() + work_.capacity() * sizeof(ValueEntry) +
                 sort_words_.capacity() * sizeof(uint64_t) + young_.MemoryBytes();
  auto add = [&](const Bucket& b) {
    bytes +=
        b.payload.packed.HeapBytes() + (b.payload.entries.capacity() + b.payload.raw.capacity()) * sizeof(ValueEntry);
  };
  for (const Bucket& b : w_.settled()) add(b);
  for (const Bucket& b : w_.unsettled()) add(b);
  return bytes;
}

std::string WindowQuantiles::Encode() const {
  ByteWriter out;
  EncodeSynopsisHeader(kMagic, {spec(), eps_, dropped_}, out);
  EncodeBuckets(w_, out, [this](const Payload& p, ByteWriter& o) {
    std::vector<ValueEntry> e = p.entries;
    if (p.young.young()) YoungSample(p, &e, nullptr);  // the bytes a packed sample of the same entries writes
    AppendPacked(p.packed, &e);                        // a bucket has one form of these
    if (!p.raw.empty()) {
      e.insert(e.end(), p.raw.begin(), p.raw.end());
      NormalizeSample(&e);
    }
    EncodeAscendingPairs(e, &ValueEntry::value, &ValueEntry::weight, o);
  });
  return out.Take();
}

Result<WindowQuantiles> WindowQuantiles::Decode(std::string_view bytes) {
  ByteReader in(bytes, "window quantiles");
  auto header = DecodeSynopsisHeader(kMagic, in);
  if (!header.ok()) return header.status();
  WindowQuantiles q(header->spec, header->eps);
  q.dropped_ = header->dropped;
  MOMENTA_RETURN_IF_ERROR(DecodeBuckets(q.w_, in, [](Bucket& b, ByteReader& r) -> Status {
    std::vector<ValueEntry> e;
    uint64_t sum = 0;
    MOMENTA_RETURN_IF_ERROR(DecodeAscendingPairs(r, b.n, "more entries than items", &ValueEntry::value,
                                                 &ValueEntry::weight, "values", "weight", &e, &sum));
    if (sum != b.n) return r.Bad("weights do not add up to the bucket's size");
    if (b.err > static_cast<double>(b.n)) return r.Bad("error bound above the bucket's size");
    b.payload.packed = Pack(e);
    return Status::OK();
  }));
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  // Unsettled buckets take their samples back into vectors.
  q.w_.ForEachFullMutable([&](Bucket& b) {
    if (b.min_ts == b.max_ts && b.max_ts >= q.now() - header->spec.tardiness) {
      AppendPacked(b.payload.packed, &b.payload.entries);
      b.payload.packed = PackedPairs();
    }
  });
  return q;
}

}  // namespace momenta
