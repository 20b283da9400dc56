// The site's loop (`momenta site`): reads a source into a connected
// SiteClient (stream/net/site_client.h), runs the protocol at each time
// that is complete (stream/window/arrival_hold.h: nothing stamped at or
// before it can still arrive, so `ask --at T` gives the same answer whenever
// it is asked), flushes when idle and heartbeats at least every heartbeat.
// When the source ends on the data clock, the client finishes
// (SiteClient::Finish: the root keeps the site's final state), with or
// without `once`; on the wall clock only with `once` (else time goes on and
// the site stays live).
// The client reconnects by itself (with backoff) and resends its state.
//
//   auto c = SiteClient::Create(client_options);          // root, name, token
//   if (c.ok() && (*c)->ConnectWithin(std::chrono::seconds(30)).ok()) {
//     TextSource in(0, "stdin", ItemMapping(), OneWord::kTimestamp, StopToken());
//     SiteLoopOptions o;
//     o.once = true;                                      // end with the input
//     auto end = RunSiteLoop(**c, in, o, StopToken());
//   }
#pragma once

#include <chrono>
#include <cstdint>

#include "storage/util/status.h"
#include "storage/util/stop_token.h"
#include "stream/drive/item_source.h"
#include "stream/net/site_client.h"

namespace momenta {

struct SiteLoopOptions {
  std::chrono::milliseconds heartbeat{1000};  // tell the root the clock at least this often
  int64_t tick_ms = 100;                      // wall clock: run the protocol this often. REQUIRES: >= 1
  bool wall = false;                          // the wall clock (items stamped when read), not the data's
  bool once = false;                          // end at the source's end (else keep heartbeating until a stop)
  NoticeFn notice;                            // where a site starting on a long log says so
};

// Sets options->backoff_max for a site heartbeating every `heartbeat`:
// reconnection attempts at most 5/8 of a heartbeat apart (backoff up to half
// of one, plus its jitter; never under backoff_min nor over its default 2 s),
// so a root that restarts has its sites back within about one heartbeat
// however long it was down.
void SetBackoffForHeartbeat(std::chrono::milliseconds heartbeat, SiteClientOptions* options);

struct SiteLoopEnd {
  uint64_t dropped = 0;  // items that arrived later than the tardiness allows
};

// Runs until a stop, or with `once` the source's end. A LogSource on the data
// clock first skips the records that have left every window the site will
// report (it tells `notice` where it starts), and stays quiet until it has
// read through the log's newest time. Errors are the source's.
// REQUIRES: c connected (c.has_params())
Result<SiteLoopEnd> RunSiteLoop(SiteClient& c, ItemSource& source, const SiteLoopOptions& options, StopToken stop);

}  // namespace momenta
