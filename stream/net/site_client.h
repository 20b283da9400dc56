// SiteClient: one site's side of the network protocol. It connects to the
// root, learns the parameters in the handshake (the root owns them), runs
// the site rules (site.h) on the ticks it is given and sends their messages
// as BATCH frames, each carrying the site's clock.
//
// Faults: when the connection fails (the root died, a send timed out, the
// root closed it with a reason) the site keeps ticking, and retries with
// exponential backoff (backoff_min doubling to backoff_max, plus up to a
// quarter of it as jitter: attempts at most 5/4 backoff_max apart). On
// every (re)connection it first sends a SNAPSHOT: its whole state as the
// root should hold it (SiteMirror), which replaces whatever the root had, so
// the root's view is exact again one frame after the handshake. Messages
// lost with a dead connection do not matter: the snapshot supersedes them.
// Blocking sockets with timeouts; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/util/status.h"
#include "stream/net/handshake.h"
#include "stream/net/name_frames.h"
#include "stream/net/net_socket.h"
#include "stream/net/wire_frame.h"
#include "stream/protocol/site.h"
#include "stream/protocol/site_mirror.h"
#include "stream/protocol/traffic_counts.h"

namespace momenta {

class SiteNames;

struct SiteClientOptions {
  HostPort root;
  std::string name;
  std::string token;
  std::chrono::milliseconds connect_timeout{1000};
  std::chrono::milliseconds io_timeout{5000};  // a send or the handshake reply
  std::chrono::milliseconds backoff_min{50}, backoff_max{2000};
  // When >= 0 and readable (a stop signal's self-pipe), every wait -- the
  // connect, the handshake reply, a send, the backoff of ConnectWithin --
  // ends at once; ConnectWithin then returns IOError "... interrupted".
  int cancel_fd = -1;
  // One line per event (connected, lost, rejected); stderr when empty.
  std::function<void(const std::string&)> log;
};

class SiteClient {
 public:
  SiteClient(const SiteClient&) = delete;
  SiteClient& operator=(const SiteClient&) = delete;
  // InvalidArgument for a bad site name.
  static Result<std::unique_ptr<SiteClient>> Create(const SiteClientOptions& options);

  // Connects, retrying with backoff until `give_up` has passed (the first
  // failure is logged, with how long it retries). The first success fixes
  // the parameters and creates the site. A rejection (wrong token,
  // parameters) ends the wait at once, with the root's reason.
  Status ConnectWithin(std::chrono::milliseconds give_up);
  // One attempt now, whatever the backoff says (tests; false when it failed).
  bool Reconnect();
  // Drops the connection as a network fault would (tests).
  void Disconnect(const std::string& why);

  // Runs tick t (site.h: expiry, then `arrivals`) and sends its messages,
  // after those of every earlier time at which an expiry changes a window
  // (Site::NextChange), in one frame: the root then knows the site's state
  // at every time up to t. When disconnected, reconnects if the backoff allows.
  // REQUIRES: parameters known (a successful ConnectWithin); t >= last tick
  void Tick(int64_t t, const std::vector<Arrival>& arrivals);
  // Tells the root the clock when the last frame did not (a clock-only frame).
  void Flush();
  // Re-sends the clock even when the root has it: keeps an idle site from
  // being timed out. Also retries a lost connection when due.
  void Heartbeat();

  // The input has ended (nothing more will arrive): drains the windows --
  // ticks at each time a synopsis changes (Site::NextChange) until all are
  // empty -- and sends the drain in a FINAL frame (wire_batch.h), so the root
  // knows the site's state at every later time and keeps it. Afterwards
  // Flush and Heartbeat send the clock only, and a reconnection sends the
  // snapshot of the last time and the same FINAL again (a restarted root
  // gets the site's state at every time from its last one on).
  // REQUIRES: parameters known; no Tick after it
  void Finish();
  bool finished() const { return finished_; }

  // Items counted by the hash of their names (site_names.h): before a frame
  // whose messages turn items on, their names go out in NAMES frames, and
  // the HELLO says protocol 4. REQUIRES: before ConnectWithin; `names`
  // outlives the client.
  void set_names(SiteNames* names) { names_ = names; }

  bool connected() const { return sock_.valid(); }
  // While quiet, Tick runs the rules and keeps the state but sends nothing,
  // Flush and Heartbeat send nothing, and a (re)connection sends the empty
  // state: a site catching up on old input (momenta site --log, started on
  // the last window of a long log) reports no clock whose window it has not
  // wholly seen. SetQuiet(false) then sends the whole state as one SNAPSHOT,
  // as a reconnection does.
  void SetQuiet(bool quiet);
  bool has_params() const { return params_.has_value(); }
  const MonitorParams& params() const { return *params_; }
  std::optional<int64_t> clock() const { return clock_; }
  const Site* site() const { return site_.get(); }
  // What this site put on the wire (frames it sent, whole), and the
  // snapshots' share.
  const TrafficCounts& sent() const { return sent_; }
  const TrafficCounts& resync_sent() const { return resync_; }
  uint64_t connections() const { return connections_; }

 private:
  explicit SiteClient(const SiteClientOptions& options) : options_(options) {}
  Status TryConnect();
  void MaybeReconnect();
  bool Send(FrameType type, int64_t clock, const std::vector<Message>& messages);
  bool SendFinal(const std::vector<Message>& drain);
  bool SendNames(const std::vector<ItemName>& names);
  // Sends one encoded frame and adds it to sent_ (`counts` gains its frame and bytes);
  // false: the connection failed and was closed.
  bool SendFrame(const std::string& frame, TrafficCounts* counts);
  // Reads what the root sent (it only ever sends REJECT before closing).
  void CheckIncoming();
  void Log(const std::string& line);

  const SiteClientOptions options_;
  Socket sock_;
  FrameWriter frames_out_;                  // this connection's frames, numbered
  std::unique_ptr<FrameReader> frames_in_;  // what the root sends on it
  std::optional<MonitorParams> params_;
  std::unique_ptr<Site> site_;
  std::unique_ptr<SiteMirror> mirror_;
  std::optional<int64_t> clock_;
  bool quiet_ = false;                           // see SetQuiet
  bool finished_ = false;                        // see Finish
  int64_t last_time_ = 0;                        // the clock when the input ended
  std::vector<Message> final_snapshot_, drain_;  // resent on each reconnection once finished
  std::optional<int64_t> sent_clock_;            // the clock of the last frame sent on this connection
  std::vector<Message> messages_;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{0};
  std::string lost_reason_;
  TrafficCounts sent_, resync_;
  uint64_t connections_ = 0;
  uint64_t jitter_ = 0x9e3779b97f4a7c15ull;
  SiteNames* names_ = nullptr;  // see set_names
};

}  // namespace momenta
