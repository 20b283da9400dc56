#include "stream/net/root_state.h"

#include <algorithm>
#include <cassert>

namespace momenta {

namespace {

TrafficCounts OneFrame(uint64_t frame_bytes) {
  TrafficCounts c;
  c.frames = 1;
  c.bytes = frame_bytes;
  return c;
}

}  // namespace

const char* SlotStateName(SiteSlot::State s) {
  switch (s) {
    case SiteSlot::State::kSyncing: return "syncing";
    case SiteSlot::State::kLive: return "live";
    case SiteSlot::State::kStale: return "stale";
  }
  return "?";
}

RootState::RootState(const MonitorParams& params, size_t max_sites)
    : params_(params), max_sites_(max_sites), root_(0, params.eps) {}

Result<uint32_t> RootState::Attach(const std::string& name, const std::string& peer) {
  uint32_t slot = 0;
  if (auto it = by_name_.find(name); it != by_name_.end()) {
    slot = it->second;
  } else {
    if (slots_.size() >= max_sites_)
      return Status::InvalidArgument("site " + name, "the root holds its maximum of " + std::to_string(max_sites_) +
                                                         " sites");
    slot = root_.AddSite();
    assert(slot == slots_.size());
    slots_.emplace_back(name, params_.spec.window);
    slots_.back().mirror = std::make_unique<SiteMirror>(SiteMirror::MaxEntries(params_.eps));
    by_name_[name] = slot;
  }
  SiteSlot& s = slots_[slot];
  s.state = SiteSlot::State::kSyncing;
  s.peer = peer;
  ++s.connects;
  root_.ResetSite(slot);
  s.mirror->Clear();
  return slot;
}

void RootState::CountFrame(uint32_t slot, uint64_t frame_bytes) {
  slots_[slot].wire.CountFrame(OneFrame(frame_bytes));
}

void RootState::ApplyMessage(uint32_t slot, const Message& m, TrafficCounts* c) {
  Message mine = m;
  mine.site = slot;
  root_.Apply(mine);
  ++c->messages;
  c->words += MessageWords(m);
}

Status RootState::ApplySnapshot(uint32_t slot, const Batch& b, uint64_t frame_bytes) {
  SiteSlot& s = slots_[slot];
  root_.ResetSite(slot);
  s.mirror->Clear();
  TrafficCounts c = OneFrame(frame_bytes);
  for (const Message& m : b.messages) {
    if (Status st = s.mirror->Apply(m); !st.ok()) {
      root_.ResetSite(slot);
      s.mirror->Clear();
      return st;
    }
    ApplyMessage(slot, m, &c);
  }
  s.clock = b.clock;
  s.has_clock = b.clock > -kMaxTime;
  s.state = SiteSlot::State::kLive;
  ++s.resyncs;
  s.wire.CountSnapshot(b.clock, c);
  return Status::OK();
}

Status RootState::ApplyBatch(uint32_t slot, const Batch& b, uint64_t frame_bytes) {
  SiteSlot& s = slots_[slot];
  assert(s.state == SiteSlot::State::kLive);
  if (b.clock < s.clock)
    return Status::Corruption("batch", "clock went back from " + std::to_string(s.clock) + " to " +
                                           std::to_string(b.clock));
  TrafficCounts c = OneFrame(frame_bytes);
  for (const Message& m : b.messages) {
    MOMENTA_RETURN_IF_ERROR(s.mirror->Apply(m));
    ApplyMessage(slot, m, &c);
  }
  s.clock = b.clock;
  s.has_clock = b.clock > -kMaxTime;
  s.wire.CountBatch(b.clock, c);
  return Status::OK();
}

void RootState::Detach(uint32_t slot, const std::string& reason) {
  SiteSlot& s = slots_[slot];
  s.state = SiteSlot::State::kStale;
  s.last_close = reason;
  root_.ResetSite(slot);
  s.mirror->Clear();
}

std::optional<int64_t> RootState::AsOf() const {
  std::optional<int64_t> t;
  for (const SiteSlot& s : slots_) {
    if (s.state != SiteSlot::State::kLive) continue;
    if (!s.has_clock) return std::nullopt;  // a site with no time yet: no time all have reached
    t = t ? std::min(*t, s.clock) : s.clock;
  }
  return t;
}

std::vector<std::string> RootState::Covered() const {
  std::vector<std::string> out;
  for (const SiteSlot& s : slots_)
    if (s.state == SiteSlot::State::kLive) out.push_back(s.name);
  return out;
}

std::vector<std::string> RootState::Uncovered() const {
  std::vector<std::string> out;
  for (const SiteSlot& s : slots_)
    if (s.state != SiteSlot::State::kLive) out.push_back(s.name);
  return out;
}

bool RootState::Reached(int64_t t) const {
  bool any = false;
  for (const SiteSlot& s : slots_) {
    if (s.state == SiteSlot::State::kSyncing) return false;
    if (s.state == SiteSlot::State::kStale) continue;
    if (!s.has_clock || s.clock < t) return false;
    any = true;
  }
  return any;
}

std::vector<ItemEstimate> RootState::Items() const { return root_.Items(); }

}  // namespace momenta
