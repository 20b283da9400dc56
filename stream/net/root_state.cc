#include "stream/net/root_state.h"

#include <algorithm>
#include <cassert>
#include <utility>

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
    case SiteSlot::State::kSyncing:
      return "syncing";
    case SiteSlot::State::kLive:
      return "live";
    case SiteSlot::State::kFinished:
      return "finished";
    case SiteSlot::State::kStale:
      return "stale";
  }
  return "?";
}

RootState::RootState(const MonitorParams& params, size_t max_sites, size_t max_held)
    : params_(params), max_sites_(max_sites), max_held_(std::max<size_t>(max_held, 1)), root_(0, params.eps) {}

size_t RootState::sites() const { return by_name_.size(); }

size_t RootState::held() const {
  size_t n = 0;
  for (const SiteSlot& s : slots_) n += s.held.size();
  return n;
}

Result<uint32_t> RootState::Attach(const std::string& name, const std::string& peer) {
  uint32_t slot = 0;
  if (auto it = by_name_.find(name); it != by_name_.end()) {
    slot = it->second;
  } else {
    if (by_name_.size() >= max_sites_)
      return Status::InvalidArgument("site " + name,
                                     "the root holds its maximum of " + std::to_string(max_sites_) + " sites");
    const auto free = std::find_if(slots_.begin(), slots_.end(), [](const SiteSlot& s) { return !s.in_use; });
    if (free != slots_.end()) {
      slot = static_cast<uint32_t>(free - slots_.begin());
      // The slot's index stays; everything it said of its last site goes (a
      // new slot, so no field is left over), but its two mirrors' memory.
      std::unique_ptr<SiteMirror> mirror = std::move(free->mirror), applied = std::move(free->applied);
      *free = SiteSlot(name, params_.spec.window);
      free->mirror = std::move(mirror);
      free->applied = std::move(applied);
    } else {
      slot = root_.AddSite();
      assert(slot == slots_.size());
      slots_.emplace_back(name, params_.spec.window);
      slots_.back().mirror = std::make_unique<SiteMirror>(SiteMirror::MaxEntries(params_.eps));
      slots_.back().applied = std::make_unique<SiteMirror>(SiteMirror::MaxEntries(params_.eps));
    }
    by_name_[name] = slot;
  }
  SiteSlot& s = slots_[slot];
  s.state = SiteSlot::State::kSyncing;
  s.peer = peer;
  ++s.connects;
  Empty(slot);
  return slot;
}

void RootState::Empty(uint32_t slot) {
  SiteSlot& s = slots_[slot];
  root_.ResetSite(slot);
  s.in_root = false;
  s.mirror->Clear();
  s.applied->Clear();
  s.held.clear();
}

void RootState::CountFrame(uint32_t slot, uint64_t frame_bytes) { slots_[slot].wire.CountFrame(OneFrame(frame_bytes)); }

void RootState::ApplyMessage(uint32_t slot, Message m) {
  SiteSlot& s = slots_[slot];
  [[maybe_unused]] Status st = s.applied->Apply(m);  // checked by `mirror` when it came
  assert(st.ok());
  if (!s.in_root) return;
  m.site = slot;
  root_.Apply(m);
}

Status RootState::ApplySnapshot(uint32_t slot, Batch b, uint64_t frame_bytes) {
  SiteSlot& s = slots_[slot];
  Empty(slot);
  TrafficCounts c = OneFrame(frame_bytes);
  for (Message& m : b.messages) {
    if (Status st = s.mirror->Apply(m); !st.ok()) {
      Empty(slot);
      return st;
    }
    ++c.messages;
    c.words += MessageWords(m);
    ApplyMessage(slot, std::move(m));
  }
  s.clock = s.base = b.clock;
  s.has_clock = b.clock > -kMaxTime;
  s.state = SiteSlot::State::kLive;
  ++s.resyncs;
  s.wire.CountSnapshot(b.clock, c);
  Advance();
  return Status::OK();
}

Status RootState::Take(uint32_t slot, Batch& b, TrafficCounts* c) {
  SiteSlot& s = slots_[slot];
  if (b.clock < s.clock)
    return Status::Corruption("batch",
                              "clock went back from " + std::to_string(s.clock) + " to " + std::to_string(b.clock));
  if (s.state == SiteSlot::State::kFinished && !b.messages.empty())
    return Status::Corruption("batch", "messages after the site's FINAL");
  for (Message& m : b.messages) {
    MOMENTA_RETURN_IF_ERROR(s.mirror->Apply(m));
    ++c->messages;
    c->words += MessageWords(m);
    if (s.held.empty() && as_of_ && m.tick <= *as_of_) {
      ApplyMessage(slot, std::move(m));
    } else {
      s.held.push_back(std::move(m));
    }
  }
  s.clock = b.clock;
  s.has_clock = b.clock > -kMaxTime;
  if (s.held.size() > max_held_) {
    // Too far ahead of the others to wait for them: its state at as_of is
    // given up; it is covered again once as_of reaches its clock.
    for (Message& m : s.held) ApplyMessage(slot, std::move(m));
    s.held.clear();
    s.base = s.clock;
    ++s.flushes;
  }
  return Status::OK();
}

Status RootState::ApplyBatch(uint32_t slot, Batch b, uint64_t frame_bytes) {
  SiteSlot& s = slots_[slot];
  assert(s.state == SiteSlot::State::kLive || s.state == SiteSlot::State::kFinished);
  TrafficCounts c = OneFrame(frame_bytes);
  MOMENTA_RETURN_IF_ERROR(Take(slot, b, &c));
  s.wire.CountBatch(b.clock, c);
  Advance();
  return Status::OK();
}

Status RootState::ApplyFinal(uint32_t slot, FinalBatch f, uint64_t frame_bytes) {
  SiteSlot& s = slots_[slot];
  assert(s.state == SiteSlot::State::kLive || s.state == SiteSlot::State::kFinished);
  if (s.state == SiteSlot::State::kFinished && !f.batch.messages.empty())
    return Status::Corruption("final", "a second FINAL with messages");
  TrafficCounts c = OneFrame(frame_bytes);
  MOMENTA_RETURN_IF_ERROR(Take(slot, f.batch, &c));
  s.wire.CountBatch(f.batch.clock, c);
  if (s.state != SiteSlot::State::kFinished) s.last_time = f.last_time;
  s.state = SiteSlot::State::kFinished;
  Advance();
  return Status::OK();
}

void RootState::Detach(uint32_t slot, const std::string& reason, std::chrono::steady_clock::time_point now) {
  SiteSlot& s = slots_[slot];
  s.last_close = reason;
  if (s.state == SiteSlot::State::kFinished) return;  // its state is final: it stays
  s.state = SiteSlot::State::kStale;
  s.stale_since = now;
  Empty(slot);
  Advance();
}

Status RootState::Forget(const std::string& name) {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return Status::NotFound("forget", "no site named '" + name + "'");
  SiteSlot& s = slots_[it->second];
  if (s.state != SiteSlot::State::kStale && s.state != SiteSlot::State::kFinished)
    return Status::InvalidArgument("forget", "site " + name + " is " + SlotStateName(s.state) +
                                                 " (only a stale or finished site can be forgotten)");
  Empty(it->second);
  s.in_use = false;
  by_name_.erase(it);
  Advance();
  return Status::OK();
}

std::vector<std::string> RootState::ForgetStale(std::chrono::steady_clock::time_point now,
                                                std::chrono::steady_clock::duration after) {
  std::vector<std::string> gone;
  for (const SiteSlot& s : slots_)
    if (s.in_use && s.state == SiteSlot::State::kStale && now - s.stale_since > after) gone.push_back(s.name);
  for (const std::string& name : gone) (void)Forget(name);
  return gone;
}

void RootState::Advance() {
  std::optional<int64_t> live, finished;
  for (const SiteSlot& s : slots_) {
    if (!s.in_use || !s.has_clock) continue;
    if (s.state == SiteSlot::State::kLive) live = live ? std::min(*live, s.clock) : s.clock;
    if (s.state == SiteSlot::State::kFinished) finished = finished ? std::max(*finished, s.last_time) : s.last_time;
  }
  // With no live site, time stands at the last one a finished site reached.
  const std::optional<int64_t> target = live ? live : finished;
  if (target && (!as_of_ || *target > *as_of_)) as_of_ = target;
  for (uint32_t i = 0; i < slots_.size(); ++i) {
    SiteSlot& s = slots_[i];
    while (as_of_ && !s.held.empty() && s.held.front().tick <= *as_of_) {
      ApplyMessage(i, std::move(s.held.front()));
      s.held.pop_front();
    }
    Sync(i);
  }
}

RootState::Gap RootState::CoverageGap(uint32_t slot) const {
  const SiteSlot& s = slots_[slot];
  if (!s.in_use) return Gap::kForgotten;
  if (s.state == SiteSlot::State::kSyncing) return Gap::kSyncing;
  if (s.state == SiteSlot::State::kStale) return Gap::kStale;
  const bool finished = s.state == SiteSlot::State::kFinished;
  if (!as_of_) return Gap::kNoTime;
  if (!finished && !s.has_clock) return Gap::kNoClock;
  if (s.has_clock && s.base > *as_of_) return Gap::kAhead;
  if (!finished && s.clock < *as_of_) return Gap::kBehind;
  return Gap::kNone;
}

std::string RootState::Coverage(uint32_t slot) const {
  const SiteSlot& s = slots_[slot];
  switch (CoverageGap(slot)) {
    case Gap::kNone:
      return "";
    case Gap::kForgotten:
      return "forgotten";
    case Gap::kSyncing:
      return "syncing (its snapshot has not come)";
    case Gap::kStale:
      return "stale (" + s.last_close + ")";
    case Gap::kNoTime:
      return "no time yet";
    case Gap::kNoClock:
      return "no clock yet";
    case Gap::kAhead:
      return "ahead: its state is from time " + std::to_string(s.base) + ", after as_of " + std::to_string(*as_of_) +
             (s.flushes ? " (it ran more than " + std::to_string(max_held_) + " messages ahead)" : "");
    case Gap::kBehind:
      return "behind: at time " + std::to_string(s.clock);
  }
  return "";
}

void RootState::Sync(uint32_t slot) {
  SiteSlot& s = slots_[slot];
  const bool want = CoverageGap(slot) == Gap::kNone;  // no words: this runs for every slot after every frame
  if (want == s.in_root) return;
  root_.ResetSite(slot);
  s.in_root = want;
  if (!want) return;
  for (Message m : s.applied->Snapshot(*as_of_)) {
    m.site = slot;
    root_.Apply(m);
  }
}

std::vector<std::string> RootState::Covered() const {
  std::vector<std::string> out;
  for (const SiteSlot& s : slots_)
    if (s.in_use && s.in_root) out.push_back(s.name);
  return out;
}

std::vector<std::string> RootState::Uncovered() const {
  std::vector<std::string> out;
  for (const SiteSlot& s : slots_)
    if (s.in_use && !s.in_root) out.push_back(s.name);
  return out;
}

bool RootState::Reached(int64_t t) const {
  bool any = false, live = false;
  for (const SiteSlot& s : slots_) {
    if (!s.in_use || s.state == SiteSlot::State::kStale) continue;
    if (s.state == SiteSlot::State::kSyncing) return false;
    any = true;
    if (s.state == SiteSlot::State::kFinished) continue;
    if (!s.has_clock || s.clock < t) return false;
    live = true;
  }
  return any && (!live || (as_of_ && *as_of_ >= t));
}

std::vector<ItemEstimate> RootState::Items() const { return root_.Items(); }

}  // namespace momenta
