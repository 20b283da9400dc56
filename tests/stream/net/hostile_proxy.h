// HostileProxy: a TCP proxy for the network tests that sits between site
// clients and a root and misbehaves the way a network or a broken middlebox
// can. It cuts each direction's byte stream into frames (wire_frame.h: the
// header's length says where a frame ends) and, frame by frame, with the
// chances given, applies the faults selected:
//
//   delay      hold the frame 0..max_delay_ms (order is kept)
//   stall      stop forwarding that direction for stall_ms, frames queue
//   cut        forward a strict prefix of the frame, then close both sides
//   duplicate  forward the whole frame twice
//   corrupt    flip one bit: in the header's first bytes, its length, or the
//              payload (a third each)
//
// Decisions come from a generator seeded with (seed, connection number), so
// a seed gives every connection the same sequence of faults per frame (the
// timing of the run around them is the machine's). Faults can be switched
// off and on while connections run (set_enabled); when off, frames pass as
// they come. Bytes that are not frames (a wrong magic) pass unchanged.
//
// One thread, poll(2), non-blocking sockets; the public methods may be
// called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "stream/net/net_socket.h"

namespace momenta::testing {

struct HostileFaults {
  bool delay = false, stall = false, cut = false, duplicate = false, corrupt = false;
  double chance = 0.05;  // per frame, for each fault selected
  int max_delay_ms = 10;
  int stall_ms = 150;
  bool root_to_site = true;  // also misbehave on what the root sends (WELCOME, REJECT)
  // "delay,stall,cut,duplicate,corrupt" with the selected ones.
  std::string ToString() const;
};

struct HostileCounts {
  uint64_t connections = 0, frames = 0;
  uint64_t delayed = 0, stalls = 0, cuts = 0, duplicated = 0, corrupted = 0;
  std::string ToString() const;
};

class HostileProxy {
 public:
  // Listens on a free loopback port; every connection accepted is forwarded
  // to `upstream`.
  HostileProxy(const HostPort& upstream, const HostileFaults& faults, uint64_t seed);
  ~HostileProxy();
  HostileProxy(const HostileProxy&) = delete;
  HostileProxy& operator=(const HostileProxy&) = delete;

  HostPort address() const { return {"127.0.0.1", port_}; }
  void set_enabled(bool on) { enabled_ = on; }
  HostileCounts counts() const;
  // True while some direction of some connection is stalled.
  bool stalled() const { return stalled_now_; }

 private:
  struct Impl;
  void Run();

  const HostPort upstream_;
  const HostileFaults faults_;
  const uint64_t seed_;
  Socket listener_;
  uint16_t port_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false}, enabled_{true}, stalled_now_{false};
  mutable std::mutex mu_;
  HostileCounts counts_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace momenta::testing
