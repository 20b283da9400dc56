// Monitor rounds of the kill driver ("A thousand kills" in bench/README.md).
//
// Setup: one `momenta root` (eps 0.1, window 2000 ms) and two `momenta site`
// processes, each tailing the update log of its own array (`--log`,
// `--item index/10`, `--heartbeat H`). The driver is the arrays' writer: every
// 5 ms it applies 1..3 updates to distinct indices of each array, stamped
// with a strictly increasing data time (ms), and remembers every record's
// time. It polls the root's `sites` answer as fast as it gets answers
// (each poll also every 5 ms) and checks every one: for each site the root
// reports live, its count must be within eps/24 (the count rule's bound,
// stream/protocol/site.h BasicCountEps) of the exact number of that site's records in
// the window (clock - W, clock] at the clock the root states for it.
//
// A round: after 300..700 ms of steady streaming, one process gets SIGKILL
// (a random site, or the root), stays down for a random pause (usually under
// two heartbeats, one round in five up to eight), and is started again (the
// root on its port). Recovery time: from the restart (spawn) to the first
// answer with every site live, within the guarantee, and each site's clock at
// or past the data time of the kill (the root knows at least what it knew).
// Reported in ms and in heartbeats.
#include "bench/kill/kill_net.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "bench/kill/kill_util.h"
#include "buffers/buffered_array.h"
#include "storage/array/array_file.h"
#include "stream/net/query_client.h"
#include "stream/protocol/site.h"

namespace momenta::kill {
namespace {

constexpr uint32_t kSites = 2;
constexpr uint64_t kArrayLength = 1000;
constexpr int64_t kWindowMs = 2000;
constexpr double kEps = 0.1;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class NetRun {
 public:
  explicit NetRun(const NetRunOptions& o) : o_(o), rng_(RoundSeed(o.seed, o.kill_root ? 4 : 3, 0)) {
    r_.kill_root = o.kill_root;
    r_.heartbeat_ms = o.heartbeat_ms;
  }
  NetRunReport Run();

 private:
  bool Setup();
  bool StartRoot(bool fixed_port);
  void StartSite(uint32_t s);
  void StreamTick();
  // One `sites` answer, checked; true when every site is live, within the
  // guarantee and at or past `need_clock`.
  bool Poll(int64_t need_clock);
  void Fail(uint64_t* counter, const std::string& what);
  uint64_t Exact(uint32_t s, int64_t clock) const;
  std::string ArrayPath(uint32_t s) const { return o_.dir + "/s" + std::to_string(s) + ".npy"; }

  const NetRunOptions o_;
  NetRunReport r_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<BufferedArray>> arrays_;
  std::vector<std::vector<int64_t>> times_;  // per site: each record's time, non-decreasing
  std::vector<pid_t> sites_;
  pid_t root_ = -1;
  uint16_t port_ = 0;
  uint64_t spawns_ = 0;
  std::unique_ptr<QueryClient> query_;
  int64_t data_time_ = 0;
  int64_t value_ = 0;
};

void NetRun::Fail(uint64_t* counter, const std::string& what) {
  ++*counter;
  if (r_.failures.size() < 20) r_.failures.push_back("kill " + std::to_string(r_.kills) + ": " + what);
  if (o_.verbose)
    std::fprintf(stderr, "kill_driver: kill %llu: %s\n", static_cast<unsigned long long>(r_.kills), what.c_str());
}

bool NetRun::StartRoot(bool fixed_port) {
  const std::string port_file = o_.dir + "/port";
  ::unlink(port_file.c_str());
  const std::string listen = "127.0.0.1:" + std::to_string(fixed_port ? port_ : 0);
  root_ = Spawn({o_.cli, "root", "--listen", listen, "--port-file", port_file, "--eps", "0.1", "--window",
                 std::to_string(kWindowMs)},
                "", o_.dir + "/root-" + std::to_string(spawns_++) + ".err");
  if (root_ < 0) return false;
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < give_up && !StopRequested()) {
    const std::string text = ReadWholeFile(port_file);
    if (!text.empty() && text.back() == '\n') {
      port_ = static_cast<uint16_t>(std::stoul(text));
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

void NetRun::StartSite(uint32_t s) {
  // Appended, not "s" + to_string(s): GCC 12 at -O3 warns falsely (-Wrestrict) on that form.
  std::string id = "s";
  id += std::to_string(s);
  sites_[s] = Spawn({o_.cli, "site", "--root", "127.0.0.1:" + std::to_string(port_), "--id", id, "--log", ArrayPath(s),
                     "--item", "index/10", "--heartbeat", std::to_string(o_.heartbeat_ms) + "ms"},
                    "", o_.dir + "/s" + std::to_string(s) + "-" + std::to_string(spawns_++) + ".err");
}

bool NetRun::Setup() {
  for (uint32_t s = 0; s < kSites; ++s) {
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kArrayLength};
    auto created = ArrayFile::Create(ArrayPath(s), DType::kI8, shape, io);
    if (!created.ok()) return false;
    created->reset();
    BufferedArrayOptions bo;
    bo.io.writable = true;
    bo.sync = LogSync::kNone;
    auto ba = BufferedArray::Open(ArrayPath(s), bo);
    if (!ba.ok()) return false;
    arrays_.push_back(std::move(ba).value());
    times_.emplace_back();
  }
  StreamTick();  // the sites' logs exist before they start
  if (!StartRoot(false)) return false;
  sites_.assign(kSites, -1);
  for (uint32_t s = 0; s < kSites; ++s) StartSite(s);
  return true;
}

void NetRun::StreamTick() {
  data_time_ = std::max(WallMs(), data_time_ + 1);
  for (uint32_t s = 0; s < kSites; ++s) {
    const uint64_t n = 1 + rng_() % 3;
    std::vector<IndexedValue> batch;
    while (batch.size() < n) {
      const uint64_t i = rng_() % kArrayLength;
      bool fresh = true;
      for (const IndexedValue& u : batch) fresh = fresh && u.index != i;
      // A distinct index per batch: one chunk, so one log frame, one time.
      if (fresh) batch.push_back({i, Value::Int(++value_), data_time_});
    }
    if (Status st = arrays_[s]->Apply(batch); !st.ok()) {
      Fail(&r_.other_failures, "apply: " + st.ToString());
      continue;
    }
    for (size_t k = 0; k < batch.size(); ++k) times_[s].push_back(data_time_);
    r_.updates += batch.size();
  }
}

uint64_t NetRun::Exact(uint32_t s, int64_t clock) const {
  const auto& t = times_[s];
  return static_cast<uint64_t>(std::upper_bound(t.begin(), t.end(), clock) -
                               std::upper_bound(t.begin(), t.end(), clock - kWindowMs));
}

bool NetRun::Poll(int64_t need_clock) {
  if (!query_) {
    auto q = QueryClient::Connect({"127.0.0.1", port_}, std::chrono::milliseconds(50));
    if (!q.ok()) return false;
    query_ = std::move(q).value();
  }
  auto answer = query_->Ask("sites", std::chrono::milliseconds(2000));
  if (!answer.ok()) {
    query_.reset();
    return false;
  }
  ++r_.answers_checked;
  std::istringstream in(*answer);
  std::string line;
  std::getline(in, line);
  const auto head = AnswerFields(line);
  bool healthy = head.count("sites") && head.at("sites") == std::to_string(kSites) + "/" + std::to_string(kSites);
  uint32_t live = 0;
  const double eps_b = BasicCountEps(kEps);
  while (std::getline(in, line)) {
    if (line.size() < 2 || line[0] != 's') continue;
    const uint32_t s = static_cast<uint32_t>(std::stoul(line.substr(1, line.find(' ') - 1)));
    if (s >= kSites) continue;
    if (line.find(" live ") == std::string::npos) continue;
    auto f = AnswerFields(line);
    if (!f.count("clock") || !f.count("count") || f["clock"] == "none") continue;
    const int64_t clock = std::stoll(f["clock"]);
    const double count = std::stod(f["count"]);
    const double exact = static_cast<double>(Exact(s, clock));
    if (std::abs(count - exact) > eps_b * exact + 1e-9)
      Fail(&r_.wrong_answers, "site s" + std::to_string(s) + " at clock " + std::to_string(clock) + ": count " +
                                  f["count"] + ", exact " + std::to_string(static_cast<uint64_t>(exact)));
    ++live;
    healthy = healthy && clock >= need_clock;
  }
  return healthy && live == kSites;
}

NetRunReport NetRun::Run() {
  const auto t0 = Clock::now();
  if (!Setup()) {
    Fail(&r_.other_failures, "setup failed (see the .err files)");
    return r_;
  }
  const auto tick = std::chrono::milliseconds(5);
  auto next_tick = Clock::now();
  auto wait_until = [&](auto&& done, Clock::time_point give_up) {
    while (!StopRequested() && Clock::now() < give_up) {
      if (Clock::now() >= next_tick) {
        StreamTick();
        next_tick += tick;
      }
      if (done()) return true;
      std::this_thread::sleep_until(std::min(next_tick, give_up));
    }
    return false;
  };
  // Everyone up before the first kill.
  if (!wait_until([&] { return Poll(0); }, Clock::now() + std::chrono::seconds(30))) {
    if (!StopRequested()) Fail(&r_.other_failures, "the root never covered both sites at the start");
    return r_;
  }
  for (uint64_t k = 0; k < o_.kills && !StopRequested(); ++k) {
    const auto steady_end = Clock::now() + std::chrono::milliseconds(300 + rng_() % 400);
    wait_until(
        [&] {
          (void)Poll(0);
          return false;
        },
        steady_end);
    const uint32_t victim = static_cast<uint32_t>(rng_() % kSites);
    const uint64_t h = o_.heartbeat_ms;
    const uint64_t pause_ms = rng_() % 5 == 0 ? h + rng_() % (7 * h) : rng_() % (2 * h);
    const int64_t clock_at_kill = data_time_;
    const auto killed_at = Clock::now();
    if (o_.kill_root) {
      KillAndReap(root_);
      query_.reset();
    } else {
      KillAndReap(sites_[victim]);
    }
    wait_until(
        [&] {
          (void)Poll(0);
          return false;
        },
        killed_at + std::chrono::milliseconds(pause_ms));
    if (StopRequested()) break;
    const auto restarted_at = Clock::now();
    r_.down_ms.push_back(MsSince(killed_at));
    if (o_.kill_root) {
      if (!StartRoot(true)) {
        Fail(&r_.other_failures, "the root did not restart on port " + std::to_string(port_));
        break;
      }
    } else {
      StartSite(victim);
    }
    ++r_.kills;
    const bool back = wait_until([&] { return Poll(clock_at_kill); }, restarted_at + std::chrono::seconds(30));
    if (StopRequested()) break;
    if (!back) {
      Fail(&r_.not_recovered, "the root's answers were not back within 30 s of the restart");
      continue;
    }
    r_.recovery_ms.push_back(MsSince(restarted_at));
    if (o_.verbose && (k + 1) % 20 == 0)
      std::fprintf(stderr, "kill_driver %s: %llu kills, recovery median %.0f ms, max %.0f ms\n",
                   o_.kill_root ? "root" : "site", static_cast<unsigned long long>(k + 1), Median(r_.recovery_ms),
                   Max(r_.recovery_ms));
  }
  for (pid_t p : sites_) KillAndReap(p);
  KillAndReap(root_);
  r_.seconds = MsSince(t0) / 1000;
  return r_;
}

}  // namespace

NetRunReport RunNetKills(const NetRunOptions& options) { return NetRun(options).Run(); }

void PrintNetReport(const NetRunReport& r) {
  const double h = static_cast<double>(r.heartbeat_ms);
  uint64_t within = 0;
  for (double ms : r.recovery_ms) within += ms <= h ? 1 : 0;
  std::printf("\n## %s killed (heartbeat %" PRIu64 " ms)\n", r.kill_root ? "root" : "site", r.heartbeat_ms);
  std::printf("kills %" PRIu64 ", down for median %.0f ms, max %.0f ms; updates streamed %" PRIu64 "\n", r.kills,
              Median(r.down_ms), Max(r.down_ms), r.updates);
  std::printf(
      "restart -> answers back within the guarantee: median %.0f ms (%.2f heartbeats), max %.0f ms (%.2f "
      "heartbeats); within one heartbeat %" PRIu64 " of %zu\n",
      Median(r.recovery_ms), Median(r.recovery_ms) / h, Max(r.recovery_ms), Max(r.recovery_ms) / h, within,
      r.recovery_ms.size());
  std::printf("answers checked %" PRIu64 ", WRONG ANSWERS %" PRIu64 ", not recovered %" PRIu64
              ", other failures %" PRIu64 "; wall %.0f s\n",
              r.answers_checked, r.wrong_answers, r.not_recovered, r.other_failures, r.seconds);
  for (const std::string& f : r.failures) std::printf("  FAILED %s\n", f.c_str());
  std::fflush(stdout);
}

}  // namespace momenta::kill
