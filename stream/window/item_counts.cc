#include "stream/window/item_counts.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "stream/window/bucket_codec.h"
#include "stream/window/byte_codec.h"

namespace momenta {

namespace {
constexpr char kMagic[] = "MWITM1";  // window item counts, encoding v1
constexpr size_t kRawFactor = 4;     // an unsettled bucket keeps up to 4m keys exactly
constexpr size_t kYoungItems = 256;  // the most items a young bucket holds (when m allows)

void AppendEntries(const FlatCountMap& map, std::vector<ItemEntry>* e) {
  map.ForEach([&](int64_t item, uint64_t count) { e->push_back({item, static_cast<uint32_t>(count)}); });
}

std::vector<ItemEntry> EntriesOf(const FlatCountMap& map) {
  std::vector<ItemEntry> e;
  e.reserve(map.size());
  AppendEntries(map, &e);
  NormalizeEntries(&e);  // keys are distinct: sorts
  return e;
}

std::vector<ItemEntry> EntriesOf(const PackedPairs& p) {
  std::vector<ItemEntry> e;
  e.reserve(p.size());
  p.ForEach([&](int64_t item, uint32_t count) { e.push_back({item, count}); });
  return e;
}

PackedPairs Pack(const std::vector<ItemEntry>& e) {
  return PackedPairs::Pack(
      e.size(), [&](size_t i) { return e[i].item; }, [&](size_t i) { return e[i].count; });
}
}  // namespace

ItemCounts::ItemCounts(const WindowSpec& spec, double item_eps)
    : item_eps_(item_eps),
      m_(std::max<size_t>(1, static_cast<size_t>(std::ceil(1 / item_eps)) - 1)),
      w_(spec, item_eps),
      young_items_(std::min(m_, kYoungItems)) {}

Result<ItemCounts> ItemCounts::Create(const WindowSpec& spec, double item_eps) {
  MOMENTA_RETURN_IF_ERROR(ValidateWindowSpec(spec));
  MOMENTA_RETURN_IF_ERROR(CheckEps(item_eps, "item counts"));
  return ItemCounts(spec, item_eps);
}

void ItemCounts::AddToTotal(int64_t item, uint64_t count) {
  pending_.Add(item, count);
  if (pending_.size() >= kPendingKeys) FlushPending();
}

void ItemCounts::FlushPending() {
  if (pending_.empty()) return;
  // total_ outgrows the caches; issuing every look-up first lets them overlap.
  pending_.ForEach([&](int64_t item, uint64_t) { total_.Prefetch(item); });
  pending_.ForEach([&](int64_t item, uint64_t count) { total_.Add(item, count); });
  pending_.Reset();
}

void ItemCounts::Cut(const std::vector<ItemDecrement>& cut) {
  if (cut.empty()) return;
  FlushPending();
  for (const ItemDecrement& d : cut) total_.Prefetch(d.item);
  for (const ItemDecrement& d : cut) {
    if (d.amount == 0) continue;
    total_.Subtract(d.item, d.amount);
    Fell(d.item);
  }
}

uint32_t ItemCounts::ReduceRaw(Bucket& b, size_t keep, bool in_total, std::vector<ItemEntry>* out) {
  out->clear();
  AppendEntries(*b.payload.raw, out);
  scratch_.clear();
  const uint32_t v = ReduceEntries(out, keep, &scratch_, &counts_);
  if (in_total) {
    Cut(scratch_);
  } else if (track_) {
    for (const ItemDecrement& d : scratch_)
      if (d.amount) Fell(d.item);
  }
  return v;
}

void ItemCounts::AppendSettled(const Bucket& b, std::vector<ItemEntry>* e) const {
  if (IsYoung(b)) {
    e->insert(e->end(), young_.begin(b.payload.young), young_.end(b.payload.young));
  } else {
    b.payload.packed.ForEach([&](int64_t item, uint32_t c) { e->push_back({item, c}); });
  }
}

void ItemCounts::PackYoung(Bucket& b) {
  std::vector<ItemEntry>& e = work_;
  e.clear();
  AppendSettled(b, &e);
  NormalizeEntries(&e, &sort_words_);  // at most y <= m entries: exact, nothing to reduce
  b.payload.packed = Pack(e);
  young_.Release(&b.payload.young);
}

void ItemCounts::Hooks::Retire(Bucket& b) {
  // b's counts join the aggregate now that a newer bucket takes arrivals.
  b.payload.raw->ForEach([&](int64_t item, uint64_t count) { self->AddToTotal(item, count); });
}

void ItemCounts::Hooks::Seal(Bucket& b, bool newest) {
  Payload& p = b.payload;
  if (b.n <= self->young_items_ && b.err == 0) {  // exact and small: young
    YoungLog<ItemEntry>& log = self->young_;
    log.Trim([&](auto&& f) { self->w_.ForEachFullMutable([&](Bucket& x) { f(x.payload.young); }); });
    log.Open(&p.young);
    p.raw->ForEach([&](int64_t item, uint64_t count) {
      log.Push({item, static_cast<uint32_t>(count)});
      if (newest) self->AddToTotal(item, count);
    });
    log.Close(&p.young);
    p.raw->Reset();
    self->spare_ = std::move(p.raw);
    return;
  }
  std::vector<ItemEntry>& e = self->work_;
  const uint32_t v = self->ReduceRaw(b, self->m_, /*in_total=*/!newest, &e);
  if (newest)
    for (const ItemEntry& x : e) self->AddToTotal(x.item, x.count);
  SortEntriesByItem(e.data(), e.data() + e.size(), &self->sort_words_);
  p.packed = Pack(e);
  p.raw->Reset();
  self->spare_ = std::move(p.raw);
  b.err += v;
}

void ItemCounts::Hooks::Detach(Bucket& b) {
  if (self->IsYoung(b)) self->PackYoung(b);  // it may straddle: Bounds searches it
  self->FlushPending();
  b.payload.packed.ForEach([&](int64_t item, uint32_t) { self->total_.Prefetch(item); });
  b.payload.packed.ForEach([&](int64_t item, uint32_t count) {
    self->total_.Subtract(item, count);
    self->Fell(item);
  });
}

void ItemCounts::Hooks::Drop(Bucket& b) {
  // The straddler's items lose its share of their estimates.
  if (self->track_) b.payload.packed.ForEach([&](int64_t item, uint32_t) { self->Fell(item); });
}

void ItemCounts::Hooks::MergeGroup(Bucket* const* members, size_t count, Bucket& out) {
  if (YoungLog<ItemEntry>::MergeYoung(members, count, self->young_items_, out)) return;
  std::vector<ItemEntry>& e = self->work_;
  std::vector<size_t>& runs = self->runs_;
  e.clear();
  runs.assign(1, 0);
  double err = 0;
  for (size_t i = 0; i < count; ++i) {
    err += members[i]->err;
    self->AppendSettled(*members[i], &e);
    if (IsYoung(*members[i])) {  // unsorted; its equal items MergeSortedRuns adds up
      SortEntriesByItem(e.data() + runs.back(), e.data() + e.size(), &self->sort_words_);
      self->young_.Release(&members[i]->payload.young);
    }
    runs.push_back(e.size());
  }
  if (e.size() <= 64) {  // few entries (young buckets): sorting beats merge passes
    SortEntriesByItem(e.data(), e.data() + e.size(), &self->sort_words_);
    runs.assign({0, e.size()});  // one sorted run: MergeSortedRuns only adds up equal items
  }
  MergeSortedRuns(&e, &runs, &self->work2_);
  self->scratch_.clear();
  const uint32_t v = ReduceEntries(&e, self->m_, &self->scratch_, &self->counts_);
  self->Cut(self->scratch_);
  out.payload.packed = Pack(e);
  out.err = err + v;
}

void ItemCounts::AdvanceTo(int64_t t) {
  Hooks h{this};
  w_.AdvanceTo(t, h);
}

bool ItemCounts::Update(int64_t ts, int64_t item, uint64_t count) {
  assert(count >= 1 && count <= kMaxBucketItems);
  if (ts > w_.now()) AdvanceTo(ts);
  if (!AcceptsArrival(w_.spec(), w_.now(), ts)) {
    dropped_ += count;
    return false;
  }
  Hooks h{this};
  Bucket& b = w_.Insert(ts, count, h);
  if (!b.payload.raw) b.payload.raw = spare_ ? std::move(spare_) : std::make_unique<FlatCountMap>();
  FlatCountMap& raw = *b.payload.raw;
  raw.Add(item, count);
  const bool newest = &b == w_.newest();
  if (!newest) AddToTotal(item, count);  // a late item into an older bucket
  Grew(item);
  if (raw.size() > kRawFactor * m_) {
    std::vector<ItemEntry> e;
    const uint32_t v = ReduceRaw(b, m_, !newest, &e);
    raw.Reset();
    for (const ItemEntry& x : e) raw.Add(x.item, x.count);
    w_.AddErr(b, v);
  }
  return true;
}

double ItemCounts::Estimate(int64_t item) const {
  const ItemBounds b = Bounds(item);
  return 0.5 * (b.low + b.high);
}

ItemBounds ItemCounts::Bounds(int64_t item) const {
  ItemBounds b;
  b.low = static_cast<double>(total_.Get(item) + pending_.Get(item));
  if (const Bucket* h = w_.newest()) b.low += static_cast<double>(h->payload.raw->Get(item));
  b.high = b.low + w_.full_err();
  if (const Bucket* s = w_.straddler()) b.high += s->payload.packed.Find(item) + s->err;
  return b;
}

double ItemCounts::SharedTerm() const {
  double e = w_.full_err();
  if (const Bucket* s = w_.straddler()) e += s->err;
  return 0.5 * e;
}

double ItemCounts::ErrorBound() const {
  double e = w_.full_err();
  if (const Bucket* s = w_.straddler()) e += static_cast<double>(s->n);
  return 0.5 * e;
}

std::vector<ItemEstimate> ItemCounts::Top(size_t k) const {
  std::vector<ItemEstimate> all;
  ForEachCandidate([&](int64_t item) { all.push_back({item, 0}); });
  std::sort(all.begin(), all.end(), [](const ItemEstimate& a, const ItemEstimate& b) { return a.item < b.item; });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const ItemEstimate& a, const ItemEstimate& b) { return a.item == b.item; }),
            all.end());
  for (ItemEstimate& e : all) e.count = Estimate(e.item);
  auto better = [](const ItemEstimate& a, const ItemEstimate& b) {
    return a.count != b.count ? a.count > b.count : a.item < b.item;
  };
  if (all.size() > k) {
    std::partial_sort(all.begin(), all.begin() + static_cast<ptrdiff_t>(k), all.end(), better);
    all.resize(k);
  } else {
    std::sort(all.begin(), all.end(), better);
  }
  return all;
}

std::vector<ItemEstimate> ItemCounts::Frequent(double phi) const {
  assert(phi > 0 && phi <= 1);
  const double threshold = (phi - 1.5 * item_eps_) * Count();
  std::vector<ItemEstimate> top = Top(SIZE_MAX);
  std::vector<ItemEstimate> out;
  for (const ItemEstimate& e : top) {
    if (e.count < threshold || e.count <= 0) break;
    out.push_back(e);
  }
  return out;
}

bool ItemCounts::DrainTouched(std::vector<int64_t>* grew, std::vector<int64_t>* fell) {
  std::sort(grew_.begin(), grew_.end());
  grew_.erase(std::unique(grew_.begin(), grew_.end()), grew_.end());
  // Copied, not swapped: the caller's buffers keep their own capacity, and a
  // compaction's cuts or a burst (many items touched at once) leave no large
  // buffer behind here.
  grew->assign(grew_.begin(), grew_.end());
  fell->assign(fell_.begin(), fell_.end());
  const bool all_fell = fell_overflow_;
  fell_overflow_ = false;
  for (std::vector<int64_t>* v : {&grew_, &fell_}) {
    v->clear();
    if (v->capacity() > kKeepTouched) v->shrink_to_fit();
  }
  return all_fell;
}

size_t ItemCounts::MemoryBytes() const {
  size_t bytes = sizeof(*this) + w_.ShellBytes() + total_.MemoryBytes() + pending_.MemoryBytes() +
                 young_.MemoryBytes() + (spare_ ? spare_->MemoryBytes() : 0) +
                 (grew_.capacity() + fell_.capacity()) * sizeof(int64_t) + scratch_.capacity() * sizeof(ItemDecrement) +
                 (work_.capacity() + work2_.capacity()) * sizeof(ItemEntry) + runs_.capacity() * sizeof(size_t) +
                 sort_words_.capacity() * sizeof(uint64_t) + counts_.capacity() * sizeof(uint32_t);
  auto add = [&](const Bucket& b) {
    bytes += b.payload.packed.HeapBytes();
    if (b.payload.raw) bytes += sizeof(FlatCountMap) + b.payload.raw->MemoryBytes();
  };
  for (const Bucket& b : w_.settled()) add(b);
  for (const Bucket& b : w_.unsettled()) add(b);
  return bytes;
}

std::string ItemCounts::Encode() const {
  ByteWriter out;
  EncodeSynopsisHeader(kMagic, {spec(), item_eps_, dropped_}, out);
  EncodeBuckets(w_, out, [this](const Payload& p, ByteWriter& o) {
    std::vector<ItemEntry> e;
    if (p.raw) {
      e = EntriesOf(*p.raw);
    } else if (p.young.young()) {  // the bytes a packed bucket of the same counts writes
      e.assign(young_.begin(p.young), young_.end(p.young));
      NormalizeEntries(&e);
    } else {
      e = EntriesOf(p.packed);
    }
    EncodeAscendingPairs(e, &ItemEntry::item, &ItemEntry::count, o);
  });
  return out.Take();
}

Result<ItemCounts> ItemCounts::Decode(std::string_view bytes) {
  ByteReader in(bytes, "item counts");
  auto header = DecodeSynopsisHeader(kMagic, in);
  if (!header.ok()) return header.status();
  ItemCounts c(header->spec, header->eps);
  c.dropped_ = header->dropped;
  const size_t m = c.m_;
  MOMENTA_RETURN_IF_ERROR(DecodeBuckets(c.w_, in, [m](Bucket& b, ByteReader& r) -> Status {
    std::vector<ItemEntry> e;
    uint64_t sum = 0;
    MOMENTA_RETURN_IF_ERROR(DecodeAscendingPairs(r, kRawFactor * m, "too many counters in a bucket", &ItemEntry::item,
                                                 &ItemEntry::count, "items", "count", &e, &sum));
    if (sum > b.n) return r.Bad("counts exceed the bucket's size");
    if (b.err > static_cast<double>(b.n - sum) + 1e-9) return r.Bad("error bound too large");
    b.payload.packed = Pack(e);
    return Status::OK();
  }));
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  // Unsettled buckets take their counts back into maps; the aggregate is rebuilt.
  c.w_.ForEachFullMutable([&](Bucket& b) {
    if (b.min_ts == b.max_ts && b.max_ts >= c.now() - header->spec.tardiness) {
      b.payload.raw = std::make_unique<FlatCountMap>();
      b.payload.packed.ForEach([&](int64_t item, uint32_t count) { b.payload.raw->Add(item, count); });
      b.payload.packed = PackedPairs();
    }
    if (&b == c.w_.newest()) return;  // the newest bucket stays out of the aggregate
    if (b.payload.raw) {
      b.payload.raw->ForEach([&](int64_t item, uint64_t count) { c.total_.Add(item, count); });
    } else {
      b.payload.packed.ForEach([&](int64_t item, uint32_t count) { c.total_.Add(item, count); });
    }
  });
  bool settled_ok = true;
  for (const Bucket& b : c.w_.settled())
    if (b.payload.packed.size() > m) settled_ok = false;
  if (!settled_ok) return in.Bad("a settled bucket holds more than m counters");
  return c;
}

}  // namespace momenta
