// RootState: the network root's knowledge, with no sockets: a slot per site
// name (live, stale or not yet synced; its clock; what crossed the wire), the
// sites' latest reports (VirtualRoot, one slot per site), and the answers.
//
// A site's slot is filled by a SNAPSHOT (its whole state, replacing whatever
// the slot held) and then BATCHes; a site that disconnects is marked stale
// and its reports leave the answers, so every answer holds, within eps, for
// the union of the windows of the sites it covers: the live, synced ones.
// as_of is the smallest clock among them: each covered site's window ends
// at its own clock >= as_of (all exactly at as_of when sites run in lockstep).
// Messages no site could have sent are refused (SiteMirror), so the state
// per site stays O(1/eps) and at most max_sites slots exist.
// Not thread-safe: the root's event loop owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/status.h"
#include "stream/net/handshake.h"
#include "stream/protocol/site_mirror.h"
#include "stream/protocol/virtual_root.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_meter.h"

namespace momenta {

struct SiteSlot {
  enum class State { kSyncing, kLive, kStale };
  // REQUIRES: window >= 1 (W)
  SiteSlot(std::string site_name, int64_t window) : name(std::move(site_name)), wire(window) {}

  std::string name;
  State state = State::kSyncing;
  int64_t clock = 0;        // the site's time as of its last frame
  bool has_clock = false;   // false until its first SNAPSHOT
  std::string peer;         // address of the current (or last) connection
  uint64_t connects = 0, resyncs = 0;
  std::string last_close;   // why the last connection closed
  WireMeter wire;           // what crossed the wire from the site
  std::unique_ptr<SiteMirror> mirror;
};

const char* SlotStateName(SiteSlot::State s);

class RootState {
 public:
  RootState(const MonitorParams& params, size_t max_sites);

  const MonitorParams& params() const { return params_; }
  // The slot of `name`, created when new (ResourceExhausted-like
  // InvalidArgument past max_sites); it becomes kSyncing: it waits for a
  // SNAPSHOT and does not count in answers until then.
  Result<uint32_t> Attach(const std::string& name, const std::string& peer);
  // Replaces the slot's state with the snapshot's. Corruption when it holds
  // messages no site sends (the slot is then left empty).
  Status ApplySnapshot(uint32_t slot, const Batch& b, uint64_t frame_bytes);
  // The messages since the last frame. Corruption for a clock that goes
  // back or a message no site sends; REQUIRES: the slot has had a SNAPSHOT
  Status ApplyBatch(uint32_t slot, const Batch& b, uint64_t frame_bytes);
  // Counts a frame that carries no state (the handshake).
  void CountFrame(uint32_t slot, uint64_t frame_bytes);
  // The site's connection closed: stale, its reports leave the answers.
  void Detach(uint32_t slot, const std::string& reason);

  const std::vector<SiteSlot>& slots() const { return slots_; }
  // Smallest clock of the covered sites (nullopt when none).
  std::optional<int64_t> AsOf() const;
  std::vector<std::string> Covered() const;
  std::vector<std::string> Uncovered() const;
  // True when some site is live, every live site has reached time t and no
  // site is between its handshake and its snapshot. Stale sites do not hold
  // answers back: answers say which sites they cover.
  bool Reached(int64_t t) const;

  double Count() const { return root_.Count(); }
  double ItemCount(int64_t item) const { return root_.ItemCount(item); }
  // REQUIRES: eps/2 < phi <= 1
  std::vector<ItemEstimate> Frequent(double phi) const { return root_.Frequent(phi); }
  std::optional<int64_t> Quantile(double phi) { return root_.QuantileByDrift(phi); }
  // Every item some covered site reports, with the root's estimate.
  std::vector<ItemEstimate> Items() const;
  double SiteCount(uint32_t slot) const { return root_.SiteCount(slot); }

 private:
  // Applies m, sent by the site of `slot`, to the answers and counts it in *c.
  void ApplyMessage(uint32_t slot, const Message& m, TrafficCounts* c);

  const MonitorParams params_;
  const size_t max_sites_;
  VirtualRoot root_;
  std::vector<SiteSlot> slots_;
  std::unordered_map<std::string, uint32_t> by_name_;
};

}  // namespace momenta
