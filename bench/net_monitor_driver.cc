// The distributed monitor's traffic as measured on the wire: a
// root (RootServer) on a loopback port in a thread, k SiteClients over a
// steady stream, ticked in lockstep for two windows of W ticks; then the
// root's own `stats` for the second (steady) window: frames, bytes,
// messages and words, in total and per site; and the first window (the
// counts climbing from zero, the costliest) from the sites' own counters. Beside them: the naive
// protocol (every arrival and expiry sent as one message, (type, site, tick,
// item), batched in one frame per site and tick) and the bound's shape
// (k/eps) log2(N/k), N the arrivals plus expiries in the window; C is the
// measured words (and messages) over that shape.
//
//   net_monitor_driver [--k 1,4,16] [--eps 0.1,0.01,0.001] [--n 1e4,1e5,1e6,1e7]
//                       [--window 100] [--seed 1] [--workload steady] [--json 1]
// Prints one markdown table row per configuration (--json 1: one JSON line each).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stream/net/query_client.h"
#include "stream/net/root_server.h"
#include "stream/net/site_client.h"
#include "stream/net/wire_frame.h"
#include "stream/testing/workloads.h"
#include "stream/window/byte_codec.h"

namespace {

using namespace momenta;

bool g_json = false;  // --json 1: one JSON line per configuration instead of the table

std::vector<double> List(const char* text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, ',');) out.push_back(std::strtod(part.c_str(), nullptr));
  return out;
}

// Counts: 1234, 56k, 7.8M.
std::string Human(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof buf, "%.0fk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// Ratios: 0.61, 51, 2409.
std::string Ratio(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 10 ? "%.0f" : "%.2f", v);
  return buf;
}

// Bytes one event costs the naive protocol inside its frame: a length
// prefix and the message (type, site, tick, item).
uint64_t NaiveBytes(uint32_t site, int64_t tick, int64_t item) {
  const uint64_t msg = 1 + VarintBytes(site) + VarintBytes(ZigZag(tick)) + VarintBytes(ZigZag(item));
  return VarintBytes(msg) + msg;
}

int RunOne(uint32_t k, double eps, double n_target, int64_t W, uint64_t seed, const std::string& workload) {
  RootServerOptions ro;
  ro.listen = {"127.0.0.1", 0};
  ro.params.eps = eps;
  ro.params.spec = {W, 0};
  ro.log = [](const std::string&) {};
  ro.site_idle_timeout = std::chrono::milliseconds(600000);
  auto server = RootServer::Start(ro);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  std::thread loop([s = server->get()] { (void)s->Run(); });
  const HostPort at{"127.0.0.1", (*server)->port()};
  std::vector<std::unique_ptr<SiteClient>> sites;
  for (uint32_t s = 0; s < k; ++s) {
    SiteClientOptions o;
    o.root = at;
    o.name = "s";
    o.name += std::to_string(s);
    o.log = [](const std::string&) {};
    o.io_timeout = std::chrono::milliseconds(60000);
    auto c = SiteClient::Create(o);
    if (!c.ok() || !(*c)->ConnectWithin(std::chrono::milliseconds(5000)).ok()) {
      std::fprintf(stderr, "site %u cannot connect\n", s);
      return 1;
    }
    sites.push_back(std::move(*c));
  }
  WorkloadParams wp;
  wp.sites = static_cast<int>(k);
  wp.spec = {W, 0};
  wp.eps = eps;
  wp.rate = n_target / (2.0 * static_cast<double>(k) * static_cast<double>(W));  // N ~ 2 x items per window
  wp.seed = seed;
  auto w = MakeWorkload(workload, wp);
  if (!w) {
    std::fprintf(stderr, "unknown workload %s\n", workload.c_str());
    return 1;
  }
  // Per site and tick, what arrived (for the expiries the naive protocol sends).
  std::vector<std::deque<std::vector<Arrival>>> past(k);
  uint64_t events = 0, naive_bytes = 0, naive_frames = 0;
  const auto start = std::chrono::steady_clock::now();
  std::vector<Arrival> arrivals;
  // The first window (the count climbing from zero: the costliest), from the
  // sites' own counters; the handshakes and empty snapshots are left out.
  TrafficCounts before, fill;
  uint64_t fill_events = 0;
  for (auto& s : sites) before += s->sent();
  for (int64_t t = 0; t < 2 * W; ++t) {
    const bool measured = t >= W;
    if (t == W) {
      for (auto& s : sites) fill += s->sent();
      fill -= before;
    }
    for (uint32_t s = 0; s < k; ++s) {
      arrivals.clear();
      w->Arrivals(t, static_cast<int>(s), &arrivals);
      uint64_t frame_events = 0, frame_bytes = 0;
      if (measured) {
        for (const Arrival& a : arrivals) frame_bytes += NaiveBytes(s, t, a.item);
        frame_events += arrivals.size();
        if (past[s].size() == static_cast<size_t>(W)) {  // ticks stamped t - W expire now
          for (const Arrival& a : past[s].front()) frame_bytes += NaiveBytes(s, t, a.item);
          frame_events += past[s].front().size();
        }
        if (frame_events) {
          events += frame_events;
          naive_bytes += frame_bytes + kFrameHeaderBytes + VarintBytes(ZigZag(t)) + VarintBytes(frame_events);
          ++naive_frames;
        }
      }
      if (!measured) fill_events += arrivals.size();
      if (past[s].size() == static_cast<size_t>(W)) past[s].pop_front();
      past[s].push_back(arrivals);
      sites[s]->Tick(t, arrivals);
    }
  }
  for (auto& s : sites) s->Flush();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto q = QueryClient::Connect(at, std::chrono::milliseconds(5000));
  if (!q.ok()) return 1;
  auto stats = (*q)->Ask("at " + std::to_string(2 * W - 1) + " wait 60000 stats", std::chrono::milliseconds(70000));
  if (!stats.ok()) {
    std::fprintf(stderr, "%s\n", stats.status().ToString().c_str());
    return 1;
  }
  std::istringstream lines(*stats);
  std::string line;
  std::map<std::string, std::string> total;
  uint64_t max_site_bytes = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("total ", 0) == 0) total = AnswerFields(line);
    if (line.rfind("s", 0) == 0)
      max_site_bytes = std::max<uint64_t>(max_site_bytes, std::stoull(AnswerFields(line)["window_bytes"]));
  }
  const double bytes = std::stod(total["window_bytes"]), messages = std::stod(total["window_messages"]);
  const double words = std::stod(total["window_words"]), frames = std::stod(total["window_frames"]);
  const double N = static_cast<double>(events);
  const double bound = (k / eps) * std::log2(std::max(2.0, N / k));
  const double fill_n = static_cast<double>(fill_events);
  const double fill_bound = (k / eps) * std::log2(std::max(2.0, fill_n / k));
  if (g_json) {  // one line, exact figures (momenta bench reads it)
    std::printf(
        "{\"k\":%u,\"eps\":%g,\"window_events\":%.0f,\"fill_events\":%.0f,\"fill_bytes\":%llu,"
        "\"steady_bytes\":%.0f,\"steady_messages\":%.0f,\"naive_bytes\":%llu,\"seconds\":%.6f,"
        "\"words_over_bound\":%.4f}\n",
        k, eps, N, fill_n, static_cast<unsigned long long>(fill.bytes), bytes, messages,
        static_cast<unsigned long long>(naive_bytes), seconds, words / bound);
    std::fflush(stdout);
  } else {
    std::printf(
        "| %u | %g | %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %.1f |\n", k, eps,
        Human(N).c_str(), Human(static_cast<double>(fill.messages)).c_str(),
        Human(static_cast<double>(fill.bytes)).c_str(), Human(static_cast<double>(fill.bytes) / k).c_str(),
        static_cast<double>(fill.words) / fill_bound, Human(messages).c_str(), Human(bytes).c_str(),
        Human(static_cast<double>(max_site_bytes)).c_str(), Human(frames).c_str(),
        Human(static_cast<double>(naive_bytes)).c_str(),
        Ratio(static_cast<double>(naive_bytes) / std::max(1.0, std::max(bytes, static_cast<double>(fill.bytes))))
            .c_str(),
        words / bound, messages / bound, seconds);
    std::fflush(stdout);
  }
  sites.clear();
  (*server)->Stop();
  loop.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> ks = {1, 4, 16}, epss = {0.1, 0.01, 0.001}, ns = {1e4, 1e5, 1e6, 1e7};
  int64_t window = 100;
  uint64_t seed = 1;
  std::string workload = "steady";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--k")
      ks = List(argv[i + 1]);
    else if (flag == "--eps")
      epss = List(argv[i + 1]);
    else if (flag == "--n")
      ns = List(argv[i + 1]);
    else if (flag == "--window")
      window = std::atoll(argv[i + 1]);
    else if (flag == "--seed")
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--workload")
      workload = argv[i + 1];
    else if (flag == "--json")
      g_json = std::string(argv[i + 1]) == "1";
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (!g_json) {
    std::printf("W = %lld ticks, workload %s, seed %llu; the second window of two, as the root counted it\n\n",
                static_cast<long long>(window), workload.c_str(), static_cast<unsigned long long>(seed));
    std::printf(
        "| k | eps | N/window (naive messages) | fill: messages | fill: bytes | fill: bytes/site | fill: C words "
        "| steady: messages | steady: bytes | steady: max bytes/site | steady: frames | naive bytes "
        "| naive/ours bytes, worse window | steady: C words | steady: C messages | run s |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  for (double n : ns)
    for (double eps : epss)
      for (double k : ks)
        if (RunOne(static_cast<uint32_t>(k), eps, n, window, seed, workload) != 0) return 1;
  return 0;
}
