#include "tests/stream/net/hostile_proxy.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <random>
#include <vector>

#include "stream/net/wire_frame.h"

namespace momenta::testing {

namespace {

using Clock = std::chrono::steady_clock;

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Bytes due to go out at `release`; the connection closes after them when `cut`.
struct Chunk {
  Clock::time_point release;
  std::string bytes;
  bool cut = false;
};

// One direction of a proxied connection.
struct Direction {
  int from = -1, to = -1;  // borrowed from the Pair
  bool misbehave = true;
  std::mt19937_64 rng;
  std::string in;         // read, not yet cut into frames
  std::deque<Chunk> out;  // in order; each released no earlier than the one before
  size_t sent = 0;        // bytes of out.front() already written
  Clock::time_point last_release{}, stalled_until{};
  bool eof = false;  // `from` closed its side
  bool raw = false;  // not frames: forwarded as they come
};

struct Pair {
  Socket client, server;
  Direction up, down;  // client -> server, server -> client
  bool dead = false;
};

}  // namespace

std::string HostileFaults::ToString() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(delay, "delay");
  add(stall, "stall");
  add(cut, "cut");
  add(duplicate, "duplicate");
  add(corrupt, "corrupt");
  return out.empty() ? "none" : out;
}

std::string HostileCounts::ToString() const {
  return "connections=" + std::to_string(connections) + " frames=" + std::to_string(frames) +
         " delayed=" + std::to_string(delayed) + " stalls=" + std::to_string(stalls) + " cuts=" + std::to_string(cuts) +
         " duplicated=" + std::to_string(duplicated) + " corrupted=" + std::to_string(corrupted);
}

struct HostileProxy::Impl {
  HostileProxy& p;
  std::vector<std::unique_ptr<Pair>> pairs;

  bool Roll(Direction& d) { return std::uniform_real_distribution<double>(0, 1)(d.rng) < p.faults_.chance; }

  void Count(uint64_t HostileCounts::*field) {
    std::lock_guard<std::mutex> lock(p.mu_);
    ++(p.counts_.*field);
  }

  // Decides what happens to one whole frame and queues what goes out.
  void OnFrame(Direction& d, std::string frame) {
    Count(&HostileCounts::frames);
    const auto now = Clock::now();
    Clock::time_point release = std::max(d.last_release, now);
    const HostileFaults& f = p.faults_;
    const bool on = p.enabled_ && d.misbehave;
    bool cut = false, twice = false;
    if (on && f.stall && Roll(d)) {
      d.stalled_until = now + std::chrono::milliseconds(f.stall_ms);
      Count(&HostileCounts::stalls);
    }
    release = std::max(release, d.stalled_until);
    if (on && f.delay && Roll(d)) {
      release += std::chrono::milliseconds(std::uniform_int_distribution<int>(0, f.max_delay_ms)(d.rng));
      Count(&HostileCounts::delayed);
    }
    if (on && f.corrupt && Roll(d)) {
      // A third each: the first bytes (magic, version, type), the length, the rest.
      size_t at = 0;
      switch (d.rng() % 3) {
        case 0:
          at = d.rng() % 4;
          break;
        case 1:
          at = 4 + d.rng() % 4;
          break;
        default:
          at = 8 + d.rng() % (frame.size() - 8);
          break;
      }
      frame[at] = static_cast<char>(frame[at] ^ (1 << (d.rng() % 8)));
      Count(&HostileCounts::corrupted);
    }
    if (on && f.cut && Roll(d)) {
      frame.resize(1 + d.rng() % (frame.size() - 1));
      cut = true;
      Count(&HostileCounts::cuts);
    } else if (on && f.duplicate && Roll(d)) {
      twice = true;
      Count(&HostileCounts::duplicated);
    }
    d.last_release = release;
    if (twice) d.out.push_back({release, frame, false});
    d.out.push_back({release, std::move(frame), cut});
  }

  // Cuts what `d` has read into frames.
  void Split(Direction& d) {
    while (!d.in.empty()) {
      if (d.raw || static_cast<uint8_t>(d.in[0]) != kWireMagic0) {
        d.raw = true;
        d.out.push_back({std::max(d.last_release, Clock::now()), std::move(d.in), false});
        d.in.clear();
        return;
      }
      if (d.in.size() < kFrameHeaderBytes) return;
      const uint64_t size = kFrameHeaderBytes + GetU32(d.in.data() + 4);
      if (size > (64u << 20)) {  // not an honest frame: let the root see it as it is
        d.raw = true;
        continue;
      }
      if (d.in.size() < size) return;
      std::string frame = d.in.substr(0, size);
      d.in.erase(0, size);
      OnFrame(d, std::move(frame));
      if (!d.out.empty() && d.out.back().cut) {
        d.in.clear();  // nothing after a cut goes out
        d.eof = true;
        return;
      }
    }
  }

  void Read(Direction& d) {
    char buf[1 << 16];
    while (!d.eof) {
      const ssize_t n = recv(d.from, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        d.in.append(buf, static_cast<size_t>(n));
        Split(d);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      d.eof = true;  // closed or reset: flush what is queued, then close
      if (!d.in.empty()) d.out.push_back({std::max(d.last_release, Clock::now()), std::move(d.in), false});
      d.in.clear();
    }
  }

  // Writes what is due; closes the pair after a cut or once a side ended
  // and everything queued went out.
  void Write(Pair& pr, Direction& d) {
    const auto now = Clock::now();
    while (!pr.dead && !d.out.empty() && d.out.front().release <= now) {
      Chunk& c = d.out.front();
      if (d.sent < c.bytes.size()) {
        const ssize_t n = send(d.to, c.bytes.data() + d.sent, c.bytes.size() - d.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) return Close(pr);
        d.sent += static_cast<size_t>(n);
        if (d.sent < c.bytes.size()) return;
      }
      const bool cut = c.cut;
      d.out.pop_front();
      d.sent = 0;
      if (cut) return Close(pr);
    }
    if (d.eof && d.out.empty()) Close(pr);
  }

  void Close(Pair& pr) {
    pr.dead = true;
    pr.client.Close();
    pr.server.Close();
  }

  void Accept() {
    while (true) {
      const int fd = accept4(p.listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      auto pr = std::make_unique<Pair>();
      pr->client = Socket(fd);
      auto up = ConnectTcp(p.upstream_, std::chrono::milliseconds(2000));
      if (!up.ok() || !SetNonBlocking(up->fd()).ok()) continue;  // the client sees its connection close
      pr->server = std::move(*up);
      uint64_t n = 0;
      {
        std::lock_guard<std::mutex> lock(p.mu_);
        n = ++p.counts_.connections;
      }
      pr->up.from = pr->client.fd();
      pr->up.to = pr->server.fd();
      pr->up.rng.seed(p.seed_ ^ (n * 0x9e3779b97f4a7c15ull));
      pr->down.from = pr->server.fd();
      pr->down.to = pr->client.fd();
      pr->down.rng.seed(p.seed_ ^ (n * 0x9e3779b97f4a7c15ull) ^ 0xd1b54a32d192ed03ull);
      pr->down.misbehave = p.faults_.root_to_site;
      pairs.push_back(std::move(pr));
    }
  }
};

HostileProxy::HostileProxy(const HostPort& upstream, const HostileFaults& faults, uint64_t seed)
    : upstream_(upstream), faults_(faults), seed_(seed) {
  auto l = ListenTcp({"127.0.0.1", 0}, &port_);
  if (l.ok()) listener_ = std::move(*l);
  if (pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { Run(); });
}

HostileProxy::~HostileProxy() {
  stop_ = true;
  const char b = 1;
  [[maybe_unused]] ssize_t n = write(wake_[1], &b, 1);
  thread_.join();
  close(wake_[0]);
  close(wake_[1]);
}

HostileCounts HostileProxy::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void HostileProxy::Run() {
  Impl s{*this, {}};
  std::vector<pollfd> fds;
  while (!stop_) {
    const auto now = Clock::now();
    fds.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    fds.push_back({listener_.fd(), POLLIN, 0});
    int timeout = 50;
    bool stalled = false;
    for (auto& pr : s.pairs) {
      for (Direction* d : {&pr->up, &pr->down}) {
        stalled = stalled || d->stalled_until > now;
        if (!d->out.empty()) {
          const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(d->out.front().release - now);
          timeout = std::clamp(static_cast<int>(wait.count()) + 1, 0, timeout);
        }
      }
      // Each socket: readable for its own direction, writable for the other's.
      const bool up_due = !pr->up.out.empty() && pr->up.out.front().release <= now;
      const bool down_due = !pr->down.out.empty() && pr->down.out.front().release <= now;
      fds.push_back({pr->client.fd(), static_cast<short>((pr->up.eof ? 0 : POLLIN) | (down_due ? POLLOUT : 0)), 0});
      fds.push_back({pr->server.fd(), static_cast<short>((pr->down.eof ? 0 : POLLIN) | (up_due ? POLLOUT : 0)), 0});
    }
    stalled_now_ = stalled;
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    if (fds[0].revents) {
      char drain[16];
      while (read(wake_[0], drain, sizeof drain) > 0) {}
    }
    const size_t before = s.pairs.size();
    for (size_t i = 0; i < before; ++i) {
      Pair& pr = *s.pairs[i];
      if (fds[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) s.Read(pr.up);
      if (fds[3 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR)) s.Read(pr.down);
      if (!pr.dead) s.Write(pr, pr.up);
      if (!pr.dead) s.Write(pr, pr.down);
    }
    if (fds[1].revents & POLLIN) s.Accept();
    std::erase_if(s.pairs, [](const std::unique_ptr<Pair>& pr) { return pr->dead; });
  }
}

}  // namespace momenta::testing
