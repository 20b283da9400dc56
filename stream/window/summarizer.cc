#include "stream/window/summarizer.h"

namespace momenta {

Result<Summarizer> Summarizer::Create(const WindowSpec& spec, double eps) {
  auto c = WindowCount::Create(spec, eps);
  if (!c.ok()) return c.status();
  auto i = ItemCounts::ForFrequentItems(spec, eps);
  if (!i.ok()) return i.status();
  auto q = WindowQuantiles::Create(spec, eps);
  if (!q.ok()) return q.status();
  return Summarizer(eps, std::move(*c), std::move(*i), std::move(*q));
}

void Summarizer::AdvanceTo(int64_t t) {
  count_.AdvanceTo(t);
  items_.AdvanceTo(t);
  quantiles_.AdvanceTo(t);
}

bool Summarizer::Add(int64_t ts, int64_t item) {
  if (ts > now()) AdvanceTo(ts);
  if (!count_.Update(ts)) return false;
  items_.Update(ts, item);
  quantiles_.Update(ts, item);
  return true;
}

WindowReport Summarizer::Report(size_t top, const std::vector<double>& phis) const {
  WindowReport r;
  r.time = now();
  r.count = count_.Estimate();
  r.count_low = count_.Low();
  r.count_high = count_.High();
  r.dropped = dropped();
  r.top = items_.Top(top);
  const RankSnapshot snap = quantiles_.Snapshot();
  for (double phi : phis) r.quantiles.push_back({phi, snap.ValueAtRank(phi * snap.total())});
  return r;
}

size_t Summarizer::MemoryBytes() const {
  return sizeof(*this) + count_.MemoryBytes() + items_.MemoryBytes() + quantiles_.MemoryBytes();
}

}  // namespace momenta
