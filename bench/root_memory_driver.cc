// The root's memory under idle and greedy peers, measured on the
// real `momenta root` process: its VmRSS (resident) and VmData (heap and
// anonymous mappings, untouched pages included, so an allocation the root
// never touches still shows) from /proc/PID/status, at each step of:
//
//   base       one site streaming (a tick per ms) and a prober asking `count`
//              every 10 ms, both for the whole run
//   silent     + N connections that never send a byte (the root keeps at
//              most 64 before their handshake: the rest are evicted)
//   sites      + N idle sites: HELLO and an empty SNAPSHOT each, then silence
//              (the root runs with --max-connections N+200); bytes per idle
//              site = (sites - base) / N
//   huge       a peer's header announcing 2^32 - 16 bytes, before and after
//              its handshake (refused from the header), and a welcomed site
//              announcing 4 MiB - 1 (the cap) that sends 1 MiB of it and
//              stalls (held as it arrives, never reserved whole)
//   ahead      (after the streaming site and the prober stop) one site at
//              time T and one that runs 10 windows ahead of it (a tick every
//              10 time units through T + 10 W, ten items each): the root holds what the ahead site
//              stamps past as_of = 1, up to --max-held messages (then it is
//              answered for as `ahead` and its messages are applied)
// and, throughout, whether the streaming site kept its one connection and
// how the prober's queries were answered (count, slowest).
//
//   root_memory_driver [--momenta PATH] [--n 1000] [--max-held M]
// PATH defaults to ../tools/momenta beside this binary (the build tree).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "stream/net/handshake.h"
#include "stream/net/net_socket.h"
#include "stream/net/query_client.h"
#include "stream/net/site_client.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_frame.h"

extern char** environ;

namespace {

using namespace momenta;
using Clock = std::chrono::steady_clock;

struct Mem {
  long rss_kib = 0, data_kib = 0;
};

Mem ReadMem(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  Mem m;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) m.rss_kib = std::atol(line.c_str() + 6);
    if (line.rfind("VmData:", 0) == 0) m.data_kib = std::atol(line.c_str() + 7);
  }
  return m;
}

void Settle() { std::this_thread::sleep_for(std::chrono::milliseconds(800)); }

void Row(const char* step, const Mem& m, const Mem& base, const std::string& note) {
  std::printf("| %s | %.1f | %+.1f | %.1f | %+.1f | %s |\n", step, m.rss_kib / 1024.0,
              (m.rss_kib - base.rss_kib) / 1024.0, m.data_kib / 1024.0, (m.data_kib - base.data_kib) / 1024.0,
              note.c_str());
}

// Connects and sends `bytes`; the socket stays open (closed with the Socket).
Socket Open(const HostPort& at, const std::string& bytes) {
  auto s = ConnectTcp(at, std::chrono::milliseconds(5000));
  if (!s.ok()) {
    std::fprintf(stderr, "connect: %s\n", s.status().ToString().c_str());
    return Socket();
  }
  if (!bytes.empty()) (void)SendAll(s->fd(), bytes, std::chrono::milliseconds(5000), "root");
  return std::move(*s);
}

std::string IdleSite(int i) {
  Hello h;
  char name[32];
  std::snprintf(name, sizeof name, "idle-%04d", i);
  h.name = name;
  FrameWriter w;
  std::string out = w.Encode(FrameType::kHello, EncodeHello(h));      // sequence 0, then 1
  out += w.Encode(FrameType::kSnapshot, EncodeBatch(-kMaxTime, {}));  // no clock: it holds no time back
  return out;
}

// A site client of the root at `at`, connected (null when it could not).
std::unique_ptr<SiteClient> Connected(const HostPort& at, const std::string& name) {
  SiteClientOptions o;
  o.root = at;
  o.name = name;
  o.log = [](const std::string&) {};
  auto c = SiteClient::Create(o);
  if (!c.ok() || !(*c)->ConnectWithin(std::chrono::milliseconds(5000)).ok()) return nullptr;
  return std::move(*c);
}

// The `sites` row of `name` (after its name), or "".
std::string SiteRowOf(const HostPort& at, const std::string& name) {
  auto q = QueryClient::Connect(at, std::chrono::milliseconds(5000));
  if (!q.ok()) return "";
  auto a = (*q)->Ask("sites", std::chrono::milliseconds(5000));
  if (!a.ok()) return "";
  const size_t p = a->find("\n" + name + " ");
  if (p == std::string::npos) return "";
  return a->substr(p + 1, a->find('\n', p + 1) - p - 1);
}

// One site at time `start`, one 10 windows ahead (W = 60000, a tick every
// 10, ten items a tick over 1024 values): what the root holds for the one ahead.
// `start`: after every time the streaming site reported (as_of never goes back).
void AheadCase(const HostPort& at, const Mem& base, int pid, int64_t start) {
  auto slow = Connected(at, "behind");
  auto fast = Connected(at, "ahead");
  if (!slow || !fast) {
    std::fprintf(stderr, "ahead: cannot connect\n");
    return;
  }
  slow->Tick(start, {{start, 7}});
  slow->Flush();
  Settle();
  const Mem before = ReadMem(pid);
  uint64_t x = 7;
  const auto t0 = Clock::now();
  for (int64_t t = start; t < start + 10 * 60000; t += 10) {
    std::vector<Arrival> a;
    for (int i = 0; i < 10; ++i) a.push_back({t, static_cast<int64_t>((x = x * 6364136223846793005ull + 1) >> 54)});
    fast->Tick(t, a);
  }
  fast->Flush();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  Settle();
  const Mem m = ReadMem(pid);
  const std::string row = SiteRowOf(at, "ahead");
  const size_t h = row.find(" held=");
  const long held = h == std::string::npos ? 0 : std::atol(row.c_str() + h + 6);
  const size_t nc = row.find(" not_covered: ");
  char note[512];
  std::snprintf(note, sizeof note,
                "10 windows (60000 ticks 10 ms apart, sent in %.1f s) ahead of the other site: held=%ld messages, %.0f "
                "bytes RSS, %.0f "
                "VmData per held message; %s",
                secs, held, held ? (m.rss_kib - before.rss_kib) * 1024.0 / held : 0.0,
                held ? (m.data_kib - before.data_kib) * 1024.0 / held : 0.0,
                nc == std::string::npos ? "covered" : row.substr(nc + 1).c_str());
  Row("+ one site 10 windows ahead", m, base, note);
}

}  // namespace

int main(int argc, char** argv) {
  std::string momenta;
  int n = 1000;
  std::string max_held = "65536";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--momenta")) momenta = argv[i + 1];
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max-held")) max_held = argv[i + 1];
  }
  if (momenta.empty()) {
    std::string self = argv[0];
    momenta = self.substr(0, self.rfind('/') + 1) + "../tools/momenta";
  }
  // Room for n + a few hundred descriptors here and in the child.
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < static_cast<rlim_t>(2 * n + 300)) {
    std::fprintf(stderr, "needs %d open files (hard limit %llu)\n", 2 * n + 300,
                 static_cast<unsigned long long>(lim.rlim_cur));
    return 1;
  }

  const char* tmp = std::getenv("TMPDIR");
  const std::string port_file =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/root_memory_driver." + std::to_string(getpid()) + ".port";
  const std::string max_conn = std::to_string(n + 200);
  std::vector<std::string> args = {momenta,
                                   "root",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--port-file",
                                   port_file,
                                   "--eps",
                                   "0.01",
                                   "--window",
                                   "60000",
                                   "--max-connections",
                                   max_conn,
                                   "--handshake-timeout",
                                   "600000",
                                   "--idle-timeout",
                                   "600000",
                                   "--max-held",
                                   max_held};
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ) != 0) {
    std::fprintf(stderr, "cannot start %s\n", momenta.c_str());
    return 1;
  }
  uint16_t port = 0;
  for (int i = 0; i < 500 && port == 0; ++i) {
    std::ifstream in(port_file);
    int p = 0;
    if (in >> p)
      port = static_cast<uint16_t>(p);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  unlink(port_file.c_str());
  if (port == 0) {
    std::fprintf(stderr, "the root did not start\n");
    kill(pid, SIGKILL);
    return 1;
  }
  const HostPort at{"127.0.0.1", port};

  // The streaming site and the prober, for the whole run.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> streamer_connections{0}, ticks{0}, answers{0}, failures{0};
  std::atomic<int64_t> slowest_us{0};
  std::thread streamer([&] {
    SiteClientOptions o;
    o.root = at;
    o.name = "streamer";
    o.log = [](const std::string&) {};
    auto c = SiteClient::Create(o);
    if (!c.ok() || !(*c)->ConnectWithin(std::chrono::milliseconds(5000)).ok()) return;
    uint64_t x = 1;
    for (int64_t t = 1; !stop; ++t) {
      std::vector<Arrival> a;
      for (int i = 0; i < 10; ++i) a.push_back({t, static_cast<int64_t>((x = x * 6364136223846793005ull + 1) >> 54)});
      (*c)->Tick(t, a);
      ++ticks;
      streamer_connections = (*c)->connections();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::thread prober([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto q = QueryClient::Connect(at, std::chrono::milliseconds(5000));
    if (!q.ok()) return;
    while (!stop) {
      const auto t0 = Clock::now();
      auto a = (*q)->Ask("count", std::chrono::milliseconds(5000));
      const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
      if (!a.ok()) {
        ++failures;
        q = QueryClient::Connect(at, std::chrono::milliseconds(5000));
        if (!q.ok()) return;
      } else {
        ++answers;
        if (us > slowest_us) slowest_us = us;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });

  std::printf("root pid %d, port %u, eps 0.01, W 60000, --max-connections %s, --max-held %s; n = %d\n\n", pid, port,
              max_conn.c_str(), max_held.c_str(), n);
  std::printf("| step | VmRSS MiB | vs base | VmData MiB | vs base | note |\n|---|---:|---:|---:|---:|---|\n");
  Settle();
  const Mem base = ReadMem(pid);
  Row("base: 1 streaming site, prober", base, base, "");

  {
    std::vector<Socket> silent;
    for (int i = 0; i < n; ++i) silent.push_back(Open(at, ""));
    Settle();
    const Mem m = ReadMem(pid);
    Row("+ silent connections", m, base, std::to_string(n) + " opened; at most 64 held before a handshake");
  }
  Settle();
  Row("silent ones closed", ReadMem(pid), base, "");

  {
    std::vector<Socket> idle;
    for (int i = 0; i < n; ++i) idle.push_back(Open(at, IdleSite(i)));
    Settle();
    const Mem m = ReadMem(pid);
    // How many the root holds live (its own `sites` answer).
    int live = 0;
    if (auto q = QueryClient::Connect(at, std::chrono::milliseconds(5000)); q.ok()) {
      if (auto a = (*q)->Ask("sites", std::chrono::milliseconds(5000)); a.ok())
        for (size_t p = 0; (p = a->find(" live ", p)) != std::string::npos; ++p) ++live;
    }
    char note[160];
    std::snprintf(note, sizeof note,
                  "%d welcomed, synced, silent (%d sites live); %.0f bytes RSS, %.0f VmData per idle site", n, live,
                  (m.rss_kib - base.rss_kib) * 1024.0 / n, (m.data_kib - base.data_kib) * 1024.0 / n);
    Row("+ idle sites", m, base, note);
    const Mem before = m;
    // A peer before its handshake announcing 2^32 - 16 bytes.
    Socket a = Open(at, EncodeFrameHeader(FrameType::kHello, 0xfffffff0u, 0, 0));
    // A welcomed site announcing the same.
    Hello h;
    h.name = "greedy";
    Socket b = Open(at, EncodeFrame(FrameType::kHello, EncodeHello(h), 0) +
                            EncodeFrameHeader(FrameType::kSnapshot, 0xfffffff0u, 1, 0));
    Settle();
    Mem m2 = ReadMem(pid);
    std::printf(
        "| huge prefix: 2^32-16 bytes announced, before and after a handshake | %.1f | %+.1f vs idle sites | %.1f "
        "| %+.1f vs idle sites | refused from the header (closed) |\n",
        m2.rss_kib / 1024.0, (m2.rss_kib - before.rss_kib) / 1024.0, m2.data_kib / 1024.0,
        (m2.data_kib - before.data_kib) / 1024.0);
    // A welcomed site announcing the cap's 4 MiB - 1 and sending 1 MiB of it.
    h.name = "slow-big";
    Socket c = Open(at, EncodeFrame(FrameType::kHello, EncodeHello(h), 0) +
                            EncodeFrameHeader(FrameType::kSnapshot, kDefaultMaxPayload - 1, 1, 0) +
                            std::string(1u << 20, 'x'));
    Settle();
    Mem m3 = ReadMem(pid);
    std::printf(
        "| huge prefix: 4 MiB - 1 announced by a welcomed site, 1 MiB sent | %.1f | %+.1f vs idle sites | %.1f | "
        "%+.1f vs idle sites | held as it arrives |\n",
        m3.rss_kib / 1024.0, (m3.rss_kib - before.rss_kib) / 1024.0, m3.data_kib / 1024.0,
        (m3.data_kib - before.data_kib) / 1024.0);
  }
  Settle();
  Row("all closed", ReadMem(pid), base, "");
  stop = true;
  streamer.join();
  prober.join();
  AheadCase(at, base, pid, static_cast<int64_t>(ticks.load()) + 2);
  std::printf(
      "\nthroughout: streaming site %llu ticks, %llu connection(s); prober %llu answers, %llu failures, "
      "slowest %.1f ms\n",
      static_cast<unsigned long long>(ticks.load()), static_cast<unsigned long long>(streamer_connections.load()),
      static_cast<unsigned long long>(answers.load()), static_cast<unsigned long long>(failures.load()),
      slowest_us.load() / 1000.0);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  return 0;
}
