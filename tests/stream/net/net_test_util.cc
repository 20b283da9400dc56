#include "tests/stream/net/net_test_util.h"
#include "tests/assert_ok.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>
#include <thread>
#include <unordered_set>

#include <gtest/gtest.h>

#include "stream/protocol/site.h"

namespace momenta::testing {

// ------------------------------------------------------------ RootThread

RootThread::RootThread(const MonitorParams& params, std::function<void(RootServerOptions&)> tweak)
    : params_(params), tweak_(std::move(tweak)) {
  Launch(0);
}

RootThread::~RootThread() { Stop(); }

void RootThread::Launch(uint16_t port) {
  RootServerOptions o;
  o.listen = {"127.0.0.1", port};
  o.params = params_;
  o.log = [this](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    logs_.push_back(line);
  };
  if (tweak_) tweak_(o);
  auto server = RootServer::Start(o);
  ASSERT_OK(server);
  server_ = std::move(*server);
  port_ = server_->port();
  thread_ = std::thread([s = server_.get()] {
    Status st = s->Run();
    EXPECT_OK(st);
  });
}

void RootThread::Stop() {
  if (!server_) return;
  server_->Stop();
  thread_.join();
  server_.reset();
}

void RootThread::Restart() {
  Stop();
  Launch(port_);
}

bool RootThread::Logged(const std::string& text, int wait_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const std::string& l : logs_)
        if (l.find(text) != std::string::npos) return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string RootThread::Logs() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const std::string& l : logs_) out += "  " + l + "\n";
  return out;
}

// ------------------------------------------------------------ LockstepRun

LockstepRun::LockstepRun(RootThread& root, uint32_t k, const std::string& workload, double rate, uint64_t seed,
                         const std::string& token, std::function<HostPort(uint32_t)> route)
    : root_(root),
      k_(k),
      token_(token),
      route_(std::move(route)),
      params_(root.params()),
      global_(root.params().spec),
      rng_(seed | 1) {
  WorkloadParams wp;
  wp.sites = static_cast<int>(k);
  wp.spec = params_.spec;
  wp.eps = params_.eps;
  wp.rate = rate;
  wp.seed = seed;
  workload_ = MakeWorkload(workload, wp);
  EXPECT_TRUE(workload_) << workload;
  history_.resize(k);
  live_.resize(k);
  covered_ticks_.resize(k);
  for (uint32_t s = 0; s < k; ++s) {
    clients_.push_back(NewClient(s));
    Status st = clients_.back()->ConnectWithin(std::chrono::milliseconds(5000));
    EXPECT_OK(st);
  }
}

LockstepRun::~LockstepRun() = default;

std::unique_ptr<SiteClient> LockstepRun::NewClient(uint32_t s) {
  SiteClientOptions o;
  o.root = route_ ? route_(s) : root_.address();
  o.name = "s";
  o.name += std::to_string(s);
  o.token = token_;
  o.backoff_min = std::chrono::milliseconds(10);
  o.backoff_max = std::chrono::milliseconds(100);
  o.log = [](const std::string&) {};
  auto c = SiteClient::Create(o);
  EXPECT_OK(c);
  return std::move(*c);
}

QueryClient& LockstepRun::query() {
  if (!query_) {
    auto q = QueryClient::Connect(root_.address(), std::chrono::milliseconds(5000));
    EXPECT_OK(q);
    query_ = std::move(*q);
  }
  return *query_;
}

void LockstepRun::Fail(int64_t t, const std::string& what) {
  if (first_.size() < 10) first_.push_back("tick " + std::to_string(t) + ": " + what);
  ++violations_;
}

std::string LockstepRun::first_violations() const {
  std::string out;
  for (const std::string& v : first_) out += "\n  " + v;
  return out;
}

void LockstepRun::Step(int64_t t, bool check) {
  const WindowSpec& spec = params_.spec;
  global_.AdvanceTo(t);
  for (uint32_t s = 0; s < k_; ++s) {
    std::vector<Arrival> arrivals;
    workload_->Arrivals(t, static_cast<int>(s), &arrivals);
    for (const Arrival& a : arrivals)
      if (a.ts <= t && AcceptsArrival(spec, t, a.ts)) {
        global_.Add(a.ts, a.item);
        live_[s].push_back(a);
      }
    while (!live_[s].empty() && live_[s].front().ts <= t - spec.window) live_[s].pop_front();
    // Items stamped late may sit behind newer ones: prune them too.
    std::erase_if(live_[s], [&](const Arrival& a) { return a.ts <= t - spec.window; });
    history_[s].emplace_back(t, arrivals);
    while (!history_[s].empty() && history_[s].front().first <= t - spec.window) history_[s].pop_front();
    if (clients_[s]) clients_[s]->Tick(t, arrivals);
  }
  for (auto& c : clients_)
    if (c) c->Flush();
  if (check) Check(t);
}

void LockstepRun::KillSite(uint32_t s) { clients_[s].reset(); }

void LockstepRun::RestartSite(uint32_t s, int64_t t) {
  clients_[s] = NewClient(s);
  Status st = clients_[s]->ConnectWithin(std::chrono::milliseconds(5000));
  ASSERT_OK(st);
  for (const auto& [tick, arrivals] : history_[s])
    if (tick > t - params_.spec.window && tick <= t) clients_[s]->Tick(tick, arrivals);
  clients_[s]->Flush();
}

bool LockstepRun::WaitAllConnected(int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (auto& c : clients_) {
      if (!c) continue;
      c->Flush();
      all = all && c->connected();
    }
    if (all) {
      query_.reset();  // the old root's query connection is gone too
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

void LockstepRun::Check(int64_t t) {
  const double eps = params_.eps;
  const double eps_b = BasicCountEps(eps), alpha = ApproxCountAlpha(eps);
  const std::vector<double> freq_phis = {0.06, 0.1, 0.2, 0.5};
  const std::vector<double> q_phis = {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0};
  const std::string at = "at " + std::to_string(t) + " wait 5000 ";
  std::vector<std::string> lines = {at + "count", at + "items", at + "sites"};
  for (double phi : freq_phis) lines.push_back(at + "frequent " + std::to_string(phi));
  for (double phi : q_phis) lines.push_back(at + "quantile " + std::to_string(phi));
  // Two direct item queries: the heaviest exact item and one never seen.
  int64_t heavy = 0;
  uint64_t heavy_count = 0;
  for (const auto& [j, cj] : global_.counts())
    if (cj > heavy_count) heavy = j, heavy_count = cj;
  lines.push_back(at + "item " + std::to_string(heavy));
  lines.push_back(at + "item 987654321987");
  auto answers = query().AskAll(lines, std::chrono::milliseconds(15000));
  if (!answers.ok()) return Fail(t, answers.status().ToString());
  ++checks_;
  const auto& A = *answers;
  for (size_t i = 0; i < A.size(); ++i)
    if (A[i].rfind("error", 0) == 0) return Fail(t, "'" + lines[i] + "' -> " + A[i]);

  // Which sites the answer covers: the oracle is their union.
  auto head = AnswerFields(Lines(A[0]).at(0));
  std::set<uint32_t> covered;
  for (uint32_t s = 0; s < k_; ++s) covered.insert(s);
  if (head.count("not_covered")) {
    std::istringstream in(head["not_covered"]);
    for (std::string name; std::getline(in, name, ',');)
      if (name.size() > 1 && name[0] == 's' && name.find_first_not_of("0123456789", 1) == std::string::npos)
        covered.erase(static_cast<uint32_t>(std::stoul(name.substr(1))));
  }
  if (covered.empty()) return Fail(t, "no site covered: " + A[0]);
  for (uint32_t s : covered) ++covered_ticks_[s];
  if (head["as_of"] != std::to_string(t)) Fail(t, "as_of " + head["as_of"] + " (want " + std::to_string(t) + ")");
  for (size_t i = 1; i < A.size(); ++i)
    if (AnswerFields(Lines(A[i]).at(0))["sites"] != head["sites"] ||
        AnswerFields(Lines(A[i]).at(0))["not_covered"] != head["not_covered"])
      Fail(t, "answers of one tick cover different sites: " + A[0] + " | " + A[i]);
  std::unique_ptr<ExactWindow> subset;
  const ExactWindow* w = &global_;
  if (covered.size() < k_) {
    ++partial_ticks_;
    subset = std::make_unique<ExactWindow>(WindowSpec{params_.spec.window, params_.spec.window - 1});
    subset->AdvanceTo(t);
    for (uint32_t s : covered)
      for (const Arrival& a : live_[s]) subset->Add(a.ts, a.item);
    w = subset.get();
  }
  const double c = static_cast<double>(w->count());

  // count
  const double count = std::stod(AnswerFields(A[0])["count"]);
  if (std::abs(count - c) > eps_b * c) Fail(t, "count " + std::to_string(count) + " vs " + std::to_string(c));
  // per-site counts (sites answer: one line per site after the header)
  for (const std::string& l : Lines(A[2])) {
    auto f = AnswerFields(l);
    if (l.size() < 2 || l[0] != 's' || !std::isdigit(static_cast<unsigned char>(l[1])) ||
        l.find(" live ") == std::string::npos)
      continue;
    const uint32_t s = static_cast<uint32_t>(std::stoul(l.substr(1, l.find(' ') - 1)));
    double cs = 0;
    for (const Arrival& a : live_[s]) cs += a.ts > t - params_.spec.window ? 1 : 0;
    if (std::abs(std::stod(f["count"]) - cs) > eps_b * cs) Fail(t, "site count: " + l + " vs " + std::to_string(cs));
  }
  // item counts: every item the root holds, the window's items, a few never seen
  std::unordered_map<int64_t, double> held;
  for (const std::string& l : Lines(A[1])) {
    if (l.find('=') != std::string::npos) continue;
    std::istringstream in(l);
    int64_t j = 0;
    double v = 0;
    in >> j >> v;
    held[j] = v;
  }
  std::vector<int64_t> items;
  for (const auto& [j, v] : held) items.push_back(j);
  if (w->counts().size() <= 1000) {
    for (const auto& [j, cj] : w->counts()) items.push_back(j);
  } else {
    for (int i = 0; i < 1000; ++i) items.push_back(w->AtRank((rng_ = rng_ * 6364136223846793005ull + 1) % w->count()));
  }
  items.push_back(static_cast<int64_t>(rng_ >> 3));
  for (int64_t j : items) {
    const double r = held.count(j) ? held[j] : 0, cj = static_cast<double>(w->Count(j));
    if (std::abs(r - cj) > alpha * c + 1e-9)
      Fail(t, "item " + std::to_string(j) + " " + std::to_string(r) + " vs " + std::to_string(cj));
  }
  auto direct = AnswerFields(A.back());
  if (std::stod(AnswerFields(A[A.size() - 2])["count"]) != (held.count(heavy) ? held[heavy] : 0))
    Fail(t, "item query disagrees with items: " + A[A.size() - 2]);
  if (std::stod(direct["count"]) != 0) Fail(t, "never-seen item: " + A.back());
  // frequent items
  for (size_t i = 0; i < freq_phis.size(); ++i) {
    const double phi = freq_phis[i];
    if (phi <= eps / 2) continue;
    std::unordered_set<int64_t> in;
    for (const std::string& l : Lines(A[3 + i])) {
      if (l.find('=') != std::string::npos) continue;
      const int64_t j = std::stoll(l.substr(0, l.find(' ')));
      in.insert(j);
      if (static_cast<double>(w->Count(j)) < (phi - eps) * c)
        Fail(t, "false frequent item " + std::to_string(j) + " phi=" + std::to_string(phi));
    }
    if (c > 0)
      for (const auto& [j, cj] : w->counts())
        if (static_cast<double>(cj) >= phi * c && !in.count(j))
          Fail(t, "missed frequent item " + std::to_string(j) + " phi=" + std::to_string(phi));
  }
  // quantiles
  for (size_t i = 0; i < q_phis.size(); ++i) {
    const std::string v = AnswerFields(A[3 + freq_phis.size() + i])["value"];
    if (c == 0) continue;
    if (v == "none" || !QuantileOk(*w, std::stoll(v), q_phis[i], eps))
      Fail(t, "quantile phi=" + std::to_string(q_phis[i]) + " -> " + v);
  }
}

// ------------------------------------------------------------ SendRaw

RawResult SendRaw(const HostPort& root, const std::string& bytes, int wait_ms) {
  RawResult r;
  auto sock = ConnectTcp(root, std::chrono::milliseconds(2000));
  if (!sock.ok()) return r;
  if (!bytes.empty()) {
    Status st = SendAll(sock->fd(), bytes, std::chrono::milliseconds(2000), "root");
    if (!st.ok()) {
      r.closed = true;
      return r;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{sock->fd(), POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = recv(sock->fd(), buf, sizeof buf, 0);
    if (n <= 0) {
      r.closed = true;
      return r;
    }
    r.reply.append(buf, static_cast<size_t>(n));
  }
  return r;
}

}  // namespace momenta::testing
