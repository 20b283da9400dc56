#include "stream/protocol/site.h"

#include <algorithm>

namespace momenta {

Result<std::unique_ptr<Site>> Site::Create(uint32_t id, const SiteOptions& o) {
  MOMENTA_RETURN_IF_ERROR(ValidateWindowSpec(o.spec));
  MOMENTA_RETURN_IF_ERROR(CheckEps(o.eps, "site"));
  std::unique_ptr<Site> s(new Site(id, o));
  if (o.basic_count) {
    s->bc_.emplace(BasicCountEps(o.eps));
    auto c = WindowCount::Create(o.spec, s->bc_->synopsis_eps());
    if (!c.ok()) return c.status();
    s->bc_count_.emplace(std::move(*c));
  }
  if (o.approx_count) {
    s->ac_.emplace(ApproxCountAlpha(o.eps));
    auto ic = ItemCounts::Create(o.spec, s->ac_->synopsis_eps());
    if (!ic.ok()) return ic.status();
    s->items_.emplace(std::move(*ic));
    s->items_->TrackTouched(true);
  }
  if (o.quantile_drift) {
    s->drift_.emplace(o.eps);
    auto q = WindowQuantiles::Create(o.spec, s->drift_->synopsis_eps());
    auto c = WindowCount::Create(o.spec, s->drift_->count_eps());
    if (!q.ok()) return q.status();
    if (!c.ok()) return c.status();
    s->drift_q_.emplace(std::move(*q));
    s->drift_count_.emplace(std::move(*c));
  }
  if (o.quantile_summary) {
    s->summary_.emplace(o.eps);
    auto q = WindowQuantiles::Create(o.spec, s->summary_->synopsis_eps());
    if (!q.ok()) return q.status();
    s->summary_q_.emplace(std::move(*q));
  }
  return s;
}

void Site::Tick(int64_t t, const std::vector<Arrival>& arrivals, std::vector<Message>* out) {
  if (bc_count_) bc_count_->AdvanceTo(t);
  if (items_) items_->AdvanceTo(t);
  if (drift_q_) drift_q_->AdvanceTo(t);
  if (drift_count_) drift_count_->AdvanceTo(t);
  if (summary_q_) summary_q_->AdvanceTo(t);
  uint64_t accepted = 0;
  for (const Arrival& a : arrivals) {
    if (a.ts > t || !AcceptsArrival(options_.spec, t, a.ts)) {
      ++dropped_;
      continue;
    }
    ++accepted;
    if (bc_count_) bc_count_->Update(a.ts);
    if (items_) items_->Update(a.ts, a.item);
    if (drift_q_) drift_q_->Update(a.ts, a.item);
    if (drift_count_) drift_count_->Update(a.ts);
    if (summary_q_) summary_q_->Update(a.ts, a.item);
  }
  if (bc_) {
    if (const int64_t d = bc_->Observe(bc_count_->Estimate()); d != 0) {
      Message m;
      m.type = MessageType::kBcDelta;
      m.site = id_;
      m.tick = t;
      m.delta = d;
      out->push_back(std::move(m));
    }
  }
  if (ac_) ac_->Check(*items_, id_, t, out);
  if (drift_) drift_->Check(*drift_q_, *drift_count_, accepted, id_, t, out);
  if (summary_) summary_->Check(*summary_q_, accepted, id_, t, out);
}

int64_t Site::NextChange() const {
  int64_t next = kMaxTime;
  if (bc_count_) next = std::min(next, bc_count_->NextChange());
  if (items_) next = std::min(next, items_->NextChange());
  if (drift_q_) next = std::min({next, drift_q_->NextChange(), drift_count_->NextChange()});
  if (summary_q_) next = std::min(next, summary_q_->NextChange());
  return next;
}

size_t Site::MemoryBytes() const {
  size_t bytes = sizeof(*this);
  if (bc_count_) bytes += bc_count_->MemoryBytes();
  if (items_) bytes += items_->MemoryBytes();
  if (ac_) bytes += ac_->on_count() * 48;
  if (drift_q_) bytes += drift_q_->MemoryBytes() + drift_count_->MemoryBytes() + drift_->boundary_count() * 48;
  if (summary_q_) bytes += summary_q_->MemoryBytes();
  return bytes;
}

}  // namespace momenta
