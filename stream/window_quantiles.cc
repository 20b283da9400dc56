#include "stream/window_quantiles.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "stream/bucket_codec.h"
#include "stream/byte_codec.h"

namespace momenta {

namespace {
constexpr char kMagic[] = "MWQNT1";  // window quantiles, encoding v1
constexpr double kLambda = 0.8;      // straddler share, times eps
constexpr double kGamma = 0.5;       // per-bucket sample error, times eps
constexpr double kEntriesPerGamma = 3;
constexpr size_t kRawFactor = 8;     // raw arrivals absorbed past 8m
constexpr size_t kCapFactor = 32;    // entries per bucket never exceed 32m
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
      w_(spec, kLambda * eps) {}

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
    NormalizeSample(&p.entries);
  }
  if (p.entries.size() <= 2 * m_) return 0;
  const double n = static_cast<double>(b.n);
  const double budget = gamma_ * n - b.err;
  double T = std::min(2 * n / static_cast<double>(m_), 2 * budget);
  if (p.entries.size() > kCapFactor * m_ && T < n / static_cast<double>(m_)) {
    T = n / static_cast<double>(m_);  // the cap: at most 2m + 1 entries remain
    ++over_budget_;
  }
  if (T < 2) return 0;
  const double added = CollapseSample(&p.entries, T);
  p.entries.shrink_to_fit();
  return added;
}

void WindowQuantiles::Hooks::Seal(Bucket& b, bool) { b.err += self->Tidy(b); }

void WindowQuantiles::Hooks::MergeGroup(Bucket* const* members, size_t count, Bucket& out) {
  size_t total = 0;
  double err = 0;
  for (size_t i = 0; i < count; ++i) {
    total += members[i]->payload.entries.size();
    err += members[i]->err;
  }
  std::vector<ValueEntry>& e = out.payload.entries;
  e.reserve(total);
  for (size_t i = 0; i < count; ++i) {
    e.insert(e.end(), members[i]->payload.entries.begin(), members[i]->payload.entries.end());
    std::vector<ValueEntry>().swap(members[i]->payload.entries);
  }
  NormalizeSample(&e);
  out.err = err;
  out.err += self->Tidy(out);
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
  auto rank_of = [x](const Payload& p) {
    uint64_t s = SampleRank(p.entries, x);
    for (const ValueEntry& v : p.raw)
      if (v.value <= x) s += v.weight;
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
  struct Weighted {
    int64_t value;
    double weight;
  };
  std::vector<Weighted> all;
  all.reserve(entry_count());
  auto add = [&](const Payload& p, double scale) {
    for (const ValueEntry& v : p.entries) all.push_back({v.value, scale * v.weight});
    for (const ValueEntry& v : p.raw) all.push_back({v.value, scale * v.weight});
  };
  w_.ForEachFull([&](const Bucket& b) { add(b.payload, 1.0); });
  if (const Bucket* s = w_.straddler()) add(s->payload, 0.5);
  std::sort(all.begin(), all.end(), [](const Weighted& a, const Weighted& b) { return a.value < b.value; });
  RankSnapshot snap;
  double cum = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    cum += all[i].weight;
    if (i + 1 < all.size() && all[i + 1].value == all[i].value) continue;
    snap.values_.push_back(all[i].value);
    snap.cum_.push_back(cum);
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
  for (const Bucket& b : w_.settled()) n += b.payload.entries.size() + b.payload.raw.size();
  for (const Bucket& b : w_.unsettled()) n += b.payload.entries.size() + b.payload.raw.size();
  return n;
}

size_t WindowQuantiles::MemoryBytes() const {
  size_t bytes = sizeof(*this) + w_.ShellBytes();
  auto add = [&](const Bucket& b) {
    bytes += (b.payload.entries.capacity() + b.payload.raw.capacity()) * sizeof(ValueEntry);
  };
  for (const Bucket& b : w_.settled()) add(b);
  for (const Bucket& b : w_.unsettled()) add(b);
  return bytes;
}

std::string WindowQuantiles::Encode() const {
  ByteWriter out;
  out.Bytes(kMagic);
  out.Signed(spec().window);
  out.Signed(spec().tardiness);
  out.F64(eps_);
  out.Varint(dropped_);
  EncodeBuckets(w_, out, [](const Payload& p, ByteWriter& o) {
    std::vector<ValueEntry> e = p.entries;
    if (!p.raw.empty()) {
      e.insert(e.end(), p.raw.begin(), p.raw.end());
      NormalizeSample(&e);
    }
    o.Varint(e.size());
    int64_t prev = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      o.Varint(i == 0 ? ZigZag(e[i].value)
                      : static_cast<uint64_t>(e[i].value) - static_cast<uint64_t>(prev));
      o.Varint(e[i].weight);
      prev = e[i].value;
    }
  });
  return out.Take();
}

Result<WindowQuantiles> WindowQuantiles::Decode(std::string_view bytes) {
  ByteReader in(bytes, "window quantiles");
  MOMENTA_RETURN_IF_ERROR(in.Expect(kMagic));
  WindowSpec spec;
  double eps = 0;
  uint64_t dropped = 0;
  MOMENTA_RETURN_IF_ERROR(in.Signed(&spec.window));
  MOMENTA_RETURN_IF_ERROR(in.Signed(&spec.tardiness));
  MOMENTA_RETURN_IF_ERROR(in.F64(&eps));
  MOMENTA_RETURN_IF_ERROR(in.Varint(&dropped));
  if (!ValidateWindowSpec(spec).ok() || !CheckEps(eps, "").ok()) return in.Bad("bad parameters");
  WindowQuantiles q(spec, eps);
  q.dropped_ = dropped;
  MOMENTA_RETURN_IF_ERROR(DecodeBuckets(q.w_, in, [](Bucket& b, ByteReader& r) -> Status {
    uint64_t size = 0;
    MOMENTA_RETURN_IF_ERROR(r.Count(&size, 2));
    if (size > b.n) return r.Bad("more entries than items");
    std::vector<ValueEntry> e(size);
    uint64_t sum = 0;
    int64_t prev = 0;
    for (uint64_t i = 0; i < size; ++i) {
      uint64_t key = 0, weight = 0;
      MOMENTA_RETURN_IF_ERROR(r.Varint(&key));
      MOMENTA_RETURN_IF_ERROR(r.Varint(&weight));
      if (i > 0 && key == 0) return r.Bad("values out of order");
      const int64_t value = i == 0 ? UnZigZag(key) : static_cast<int64_t>(static_cast<uint64_t>(prev) + key);
      if (i > 0 && value <= prev) return r.Bad("values out of order");
      if (weight == 0 || weight > kMaxBucketItems) return r.Bad("bad weight");
      sum += weight;
      e[i] = {value, static_cast<uint32_t>(weight)};
      prev = value;
    }
    if (sum != b.n) return r.Bad("weights do not add up to the bucket's size");
    if (b.err > static_cast<double>(b.n)) return r.Bad("error bound above the bucket's size");
    b.payload.entries = std::move(e);
    return Status::OK();
  }));
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return q;
}

}  // namespace momenta
