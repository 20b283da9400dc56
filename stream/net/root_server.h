// RootServer: the root process's network loop. One port takes both kinds of
// peer, told apart by their first byte: sites speak frames (wire_frame.h,
// first byte 0xB5), queries are text lines (root_query.h), so `nc` works.
//
// One thread, poll(2), non-blocking sockets. A frame delivered twice is
// applied once (its sequence, wire_frame.h). Every way a peer can misbehave
// closes that peer's connection with a logged reason and leaves the others
// alone: a malformed or oversized frame (payloads are capped), a wrong
// version, token or parameters, a peer silent through the handshake, a site
// silent for idle_timeout, a query line past 4 KiB or not complete within
// query_line_timeout, a query connection idle for query_idle_timeout, a peer
// that does not read its answers (output capped).
//
// The connection table is split so that no kind of peer can fill it for the
// others, and no token is needed to be counted in the first two:
//   - pending: not yet identified, or a site before its WELCOME — at most
//     max_pending; a new connection evicts the oldest pending one (once what
//     it has sent is read, in case it identifies it);
//   - queries: at most max_queries; a new one evicts the query connection
//     with the oldest incomplete line, else the longest idle one, else the
//     longest parked `at` query (it is refused when none of these exists);
//   - sites (after WELCOME): the rest of max_connections, at least
//     max_connections - max_pending - max_queries.
// A peer's frames are capped at kMaxHandshakePayload until its HELLO is
// accepted (token and name), at max_payload after; a frame's bytes are held
// as they arrive, never reserved from its length. Memory is bounded by
// max_pending times ~1 KiB plus the sites' connections times 2 max_payload
// (string growth; a buffer grown for a large frame is released when it is
// consumed), plus max_output per peer and O(1/eps) per site (~2 KB for an
// idle one, bench/README.md) plus up to max_held messages for a site ahead
// of the others (root_state.h). The root keeps nothing on disk: when it restarts, sites
// reconnect and resend their state.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "storage/util/status.h"
#include "stream/net/handshake.h"
#include "stream/net/net_socket.h"
#include "stream/net/wire_frame.h"

namespace momenta {

struct RootServerOptions {
  HostPort listen;  // port 0: any free port (see port())
  MonitorParams params;
  std::string token;  // empty: no token asked for
  uint32_t max_payload = kDefaultMaxPayload;
  size_t max_connections = 512;  // every kind; sites get what pending and queries cannot take
  // The caller's word for max_connections in the log's advice when file
  // descriptors run out ("lower <it>"; the CLI says "--max-connections").
  std::string max_connections_word = "max_connections";
  size_t max_pending = 64;  // connections before their kind is known or their handshake done
  size_t max_queries = 64;  // query connections
  size_t max_sites = 4096;
  // Messages one site may have stamped past the others' time (as_of) before
  // it is answered for as ahead (root_state.h): ~65 bytes each.
  size_t max_held = size_t{1} << 16;
  // A site stale this long is forgotten (listed no more); 0: never.
  std::chrono::milliseconds forget_after{0};
  size_t max_output = 8u << 20;  // bytes queued for one peer before it counts as not reading
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds site_idle_timeout{30000};
  std::chrono::milliseconds query_idle_timeout{10000};  // no query line in progress or parked
  std::chrono::milliseconds query_line_timeout{2000};   // from a line's first byte to its newline
  // One line per event (connections opened and closed, with reasons);
  // stderr when empty. Called on the loop's thread.
  std::function<void(const std::string&)> log;
};

class RootServer {
 public:
  ~RootServer();
  RootServer(const RootServer&) = delete;
  RootServer& operator=(const RootServer&) = delete;

  // Binds and listens (IOError naming the address when it cannot).
  static Result<std::unique_ptr<RootServer>> Start(const RootServerOptions& options);
  uint16_t port() const;
  // Serves until Stop(); then closes every connection. Call from one thread.
  Status Run();
  // Any thread, also a signal handler: makes Run() return soon.
  void Stop();

 private:
  struct Impl;
  explicit RootServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace momenta
