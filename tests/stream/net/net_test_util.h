// Helpers for the network monitor tests: a root on an ephemeral loopback
// port in its own thread, and a lockstep run of k site clients over a
// generated workload whose root answers are checked, at every tick, against
// exact windows over the sites each answer says it covers.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "stream/net/query_client.h"
#include "stream/net/root_server.h"
#include "stream/net/site_client.h"
#include "stream/testing/exact_window.h"
#include "stream/testing/workloads.h"
#include "tests/test_util.h"

namespace momenta::testing {

class RootThread {
 public:
  // `tweak` adjusts the options (timeouts, token) before the root starts.
  explicit RootThread(const MonitorParams& params, std::function<void(RootServerOptions&)> tweak = {});
  ~RootThread();
  RootThread(const RootThread&) = delete;
  RootThread& operator=(const RootThread&) = delete;

  // Stops the root: every connection drops, its state is gone.
  void Stop();
  // A fresh root on the same port (sites reconnect and resend their state).
  void Restart();
  HostPort address() const { return {"127.0.0.1", port_}; }
  const MonitorParams& params() const { return params_; }
  // True when a logged line contains `text` (waits up to `wait_ms`).
  bool Logged(const std::string& text, int wait_ms = 3000) const;
  std::string Logs() const;

 private:
  void Launch(uint16_t port);
  const MonitorParams params_;
  std::function<void(RootServerOptions&)> tweak_;
  std::unique_ptr<RootServer> server_;
  std::thread thread_;
  uint16_t port_ = 0;
  mutable std::mutex mu_;
  std::vector<std::string> logs_;
};

class LockstepRun {
 public:
  // `route`, when set, gives the address site s connects to (a proxy in
  // front of the root, say); the root's own address otherwise.
  LockstepRun(RootThread& root, uint32_t k, const std::string& workload, double rate, uint64_t seed,
              const std::string& token = "", std::function<HostPort(uint32_t)> route = {});
  ~LockstepRun();

  // Tick t: every site gets its arrivals (a dead site's are only recorded,
  // as its log would keep them), every running client ticks and flushes,
  // then (when `check`) the root's answers at t are checked.
  void Step(int64_t t, bool check = true);
  // The site process dies: connection and state gone.
  void KillSite(uint32_t s);
  // A new process for site s at time t: it connects and re-reads its last W
  // time units of input (ticks t-W+1..t), as `momenta site --log` does.
  void RestartSite(uint32_t s, int64_t t);
  // Flushes every client until all are connected (false after wait_ms).
  bool WaitAllConnected(int wait_ms);
  SiteClient* client(uint32_t s) { return clients_[s].get(); }
  QueryClient& query();

  uint64_t violations() const { return violations_; }
  uint64_t checks() const { return checks_; }
  std::string first_violations() const;
  // Ticks whose answers covered fewer than all k sites.
  uint64_t partial_ticks() const { return partial_ticks_; }
  // Checked ticks whose answers covered site s.
  uint64_t covered_ticks(uint32_t s) const { return covered_ticks_[s]; }

 private:
  void Check(int64_t t);
  void Fail(int64_t t, const std::string& what);
  std::unique_ptr<SiteClient> NewClient(uint32_t s);

  RootThread& root_;
  const uint32_t k_;
  const std::string token_;
  const std::function<HostPort(uint32_t)> route_;
  const MonitorParams params_;
  std::unique_ptr<Workload> workload_;
  std::vector<std::unique_ptr<SiteClient>> clients_;
  std::vector<std::deque<std::pair<int64_t, std::vector<Arrival>>>> history_;  // per site: tick -> arrivals
  std::vector<std::deque<Arrival>> live_;  // per site: accepted items still in the window
  ExactWindow global_;
  std::unique_ptr<QueryClient> query_;
  uint64_t violations_ = 0, checks_ = 0, partial_ticks_ = 0;
  std::vector<uint64_t> covered_ticks_;
  std::vector<std::string> first_;
  uint64_t rng_;
};

// Sends raw bytes to the root and reports whether the root closed the
// connection within wait_ms, with what it sent back.
struct RawResult {
  bool closed = false;
  std::string reply;
};
RawResult SendRaw(const HostPort& root, const std::string& bytes, int wait_ms);

}  // namespace momenta::testing
