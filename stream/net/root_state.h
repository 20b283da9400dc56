// RootState: the network root's knowledge, with no sockets: a slot per site
// name (syncing, live, finished or stale; its clock; what crossed the wire),
// the sites' reports (VirtualRoot, one slot per site), and the answers.
//
// A site's slot is filled by a SNAPSHOT (its whole state at the snapshot's
// clock, replacing whatever the slot held), then BATCHes, and maybe a FINAL
// (its input ended: the drain of its windows, then nothing more).
//
// One time for every answer. The root applies each site's messages in tick
// order, but only up to as_of: the smallest clock among the live sites (it
// never goes back). Messages stamped after it are held per site until every
// live site has reached them. So the answers hold, within eps, for the items
// every covered site holds stamped in (as_of - W, as_of], and an answer for
// one as_of is the same whenever it is asked. A site is covered when the
// root holds its state at as_of exactly: live with its snapshot at or before
// as_of and its clock at or after it, or finished (its state at every later
// time is known). Not covered, with the reason (Coverage): syncing, stale,
// no clock yet (it does not hold as_of back; `at T` waits for it), behind
// (its clock is before as_of: a site that joined or came back late), ahead
// (its snapshot is after as_of, or it held more than max_held messages past
// as_of: those are applied at once, and it is covered again once the others
// reach its clock). A site ahead costs the root at most max_held messages
// (~65 bytes each; bench/README.md).
//
// Finished sites (FINAL) keep their state: covered from their last time on,
// counted until their items leave the window. Stale sites (the connection
// closed without FINAL) leave the answers; Forget drops a stale or finished
// site's slot altogether. Messages no site could have sent are refused
// (SiteMirror), so the state per site stays O(1/eps) plus what it holds, and
// at most max_sites slots exist. Not thread-safe: the root's event loop owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/util/status.h"
#include "stream/net/handshake.h"
#include "stream/net/root_names.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_meter.h"
#include "stream/protocol/site_mirror.h"
#include "stream/protocol/virtual_root.h"

namespace momenta {

struct SiteSlot {
  enum class State { kSyncing, kLive, kFinished, kStale };
  // REQUIRES: window >= 1 (W)
  SiteSlot(std::string site_name, int64_t window) : name(std::move(site_name)), wire(window) {}

  std::string name;
  bool in_use = true;  // false once forgotten (the slot waits for a new site)
  State state = State::kSyncing;
  int64_t clock = 0;         // the site's time as of its last frame
  bool has_clock = false;    // false until a frame with a clock
  int64_t base = 0;          // the applied state is the site's from this time on (its snapshot's clock)
  int64_t last_time = 0;     // finished: its clock when its input ended
  std::deque<Message> held;  // received, stamped after as_of: applied as as_of reaches them
  uint64_t flushes = 0;      // times it held more than max_held and was applied ahead
  std::string peer;          // address of the current (or last) connection
  uint64_t connects = 0, resyncs = 0;
  std::string last_close;  // why the last connection closed
  std::chrono::steady_clock::time_point stale_since{};
  WireMeter wire;                       // what crossed the wire from the site
  std::unique_ptr<SiteMirror> mirror;   // the site's latest state (refuses what no site sends)
  std::unique_ptr<SiteMirror> applied;  // its state at min(as_of, clock): what answers may include
  bool in_root = false;                 // `applied` is in the answers (the slot is covered)
};

const char* SlotStateName(SiteSlot::State s);

class RootState {
 public:
  // Messages a site may have held past as_of before it is applied ahead.
  static constexpr size_t kDefaultMaxHeld = size_t{1} << 16;
  RootState(const MonitorParams& params, size_t max_sites, size_t max_held = kDefaultMaxHeld);

  const MonitorParams& params() const { return params_; }
  // The slot of `name`, created when new (InvalidArgument past max_sites);
  // it becomes kSyncing: it waits for a SNAPSHOT and does not count in
  // answers until then.
  Result<uint32_t> Attach(const std::string& name, const std::string& peer);
  // Replaces the slot's state with the snapshot's. Corruption when it holds
  // messages no site sends (the slot is then left empty).
  Status ApplySnapshot(uint32_t slot, Batch b, uint64_t frame_bytes);
  // The messages since the last frame. Corruption for a clock that goes
  // back, a message no site sends, or messages after FINAL.
  // REQUIRES: the slot has had a SNAPSHOT
  Status ApplyBatch(uint32_t slot, Batch b, uint64_t frame_bytes);
  // The site's input ended: its drain, then it is finished. As ApplyBatch.
  Status ApplyFinal(uint32_t slot, FinalBatch f, uint64_t frame_bytes);
  // Counts a frame that carries no state (the handshake).
  void CountFrame(uint32_t slot, uint64_t frame_bytes);
  // The site's connection closed: stale, its reports leave the answers
  // (a finished site stays finished).
  void Detach(uint32_t slot, const std::string& reason,
              std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // Drops a stale or finished site's slot (NotFound for an unknown name,
  // InvalidArgument for a site that is connected).
  Status Forget(const std::string& name);
  // Forgets every site stale for longer than `after`; returns their names.
  std::vector<std::string> ForgetStale(std::chrono::steady_clock::time_point now,
                                       std::chrono::steady_clock::duration after);

  // Every slot, forgotten ones too (in_use false: skip them).
  const std::vector<SiteSlot>& slots() const { return slots_; }
  size_t sites() const;  // slots in use
  // The time every answer holds for (nullopt before any site has a clock).
  std::optional<int64_t> AsOf() const { return as_of_; }
  // Why the slot is not covered at as_of, or "" when it is.
  std::string Coverage(uint32_t slot) const;
  std::vector<std::string> Covered() const;
  std::vector<std::string> Uncovered() const;
  // True when some site is live or finished, every live site has reached
  // time t (as_of >= t, or finished sites only) and no site is between its
  // handshake and its snapshot. Stale and finished sites do not hold
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
  // Messages held past as_of, over all sites.
  size_t held() const;
  // The names of items counted by hash (NAMES frames; root_names.h).
  RootNames& names() { return names_; }
  const RootNames& names() const { return names_; }

 private:
  // Why a slot is not covered at as_of (kNone: it is); Coverage says it in words.
  enum class Gap { kNone, kForgotten, kSyncing, kStale, kNoTime, kNoClock, kAhead, kBehind };
  Gap CoverageGap(uint32_t slot) const;
  // Applies m, sent by the site of `slot`, to the answers.
  void ApplyMessage(uint32_t slot, Message m);
  // Checks and takes a batch's messages: applied when stamped at or before
  // as_of, else held (applied ahead past max_held); b's messages are moved
  // from (its clock is left).
  Status Take(uint32_t slot, Batch& b, TrafficCounts* c);
  // Moves as_of to the smallest live clock when that is later, and applies
  // what every slot holds up to it.
  void Advance();
  // Puts the slot's applied state into the answers when it is covered,
  // takes it out when not.
  void Sync(uint32_t slot);
  void Empty(uint32_t slot);  // forgets what the slot reported and holds

  const MonitorParams params_;
  const size_t max_sites_, max_held_;
  VirtualRoot root_;
  std::vector<SiteSlot> slots_;
  std::unordered_map<std::string, uint32_t> by_name_;
  std::optional<int64_t> as_of_;
  RootNames names_;
};

}  // namespace momenta
