#include "stream/net/root_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "stream/net/root_answer.h"
#include "stream/net/root_intake.h"
#include "stream/net/root_state.h"

namespace momenta {

namespace {

using Clock = std::chrono::steady_clock;

struct Conn {
  enum class Kind { kUnknown, kSite, kQuery };
  Socket sock;
  std::string peer;
  Kind kind = Kind::kUnknown;
  std::unique_ptr<FrameReader> frames;
  FrameWriter frames_out;          // numbers what the root sends this peer
  uint64_t duplicates_logged = 0;  // frames sent twice, as last logged
  std::string in;                  // query bytes not yet consumed
  std::string out;                 // bytes queued for the peer
  size_t out_pos = 0;
  int64_t slot = -1;    // the site's slot once welcomed
  bool synced = false;  // a SNAPSHOT arrived
  bool eof = false;     // the peer closed its side
  bool dead = false;
  Clock::time_point opened, last_input;
  Clock::time_point line_start;  // when the incomplete line in `in` began (queries)
  std::optional<Query> parked;
  Clock::time_point park_deadline;

  std::string Describe(const RootState& st) const {
    if (kind == Kind::kSite && slot >= 0) return peer + " (site " + st.slots()[static_cast<size_t>(slot)].name + ")";
    if (kind == Kind::kSite) return peer + " (site, before its handshake)";
    if (kind == Kind::kQuery) return peer + " (query)";
    return peer;
  }
  // Not yet identified, or a site that has not been welcomed.
  bool pending() const { return !dead && (kind == Kind::kUnknown || (kind == Kind::kSite && slot < 0)); }
  bool query() const { return !dead && kind == Kind::kQuery; }
};

}  // namespace

struct RootServer::Impl {
  explicit Impl(const RootServerOptions& o) : options(o), state(o.params, o.max_sites, o.max_held) {}

  RootServerOptions options;
  Socket listener;
  uint16_t port = 0;
  int wake[2] = {-1, -1};
  std::atomic<bool> stop{false};
  RootState state;
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<Conn*> owner;  // slot -> the connection feeding it (or null)
  uint64_t root_id = 0;
  bool changed = false;
  // Held open so that, out of file descriptors, the root can still take a
  // waiting connection off the listener and close it (else poll reports the
  // listener readable for ever: a busy loop).
  int reserve_fd = -1;
  uint64_t fd_refusals = 0;
  Clock::time_point fd_refusal_logged{};

  void Log(const std::string& line) {
    if (options.log) {
      options.log(line);
    } else {
      std::fprintf(stderr, "momenta root: %s\n", line.c_str());
    }
  }

  // Closes c; logs why unless it is a query peer leaving normally.
  void Close(Conn& c, const std::string& reason, bool quiet = false) {
    if (c.dead) return;
    if (!quiet) Log("closed " + c.Describe(state) + ": " + reason);
    if (c.slot >= 0) {
      const auto slot = static_cast<uint32_t>(c.slot);
      if (owner[slot] == &c) {
        state.Detach(slot, reason);
        owner[slot] = nullptr;
        changed = true;
      }
      c.slot = -1;
    }
    c.dead = true;
    c.sock.Close();
  }

  // Best effort: tells a site why before closing (the socket is fresh, so
  // the frame fits its buffer). `final`: retrying cannot help (handshake.h).
  void Reject(Conn& c, const std::string& reason, bool final = false) {
    const std::string f = c.frames_out.Encode(FrameType::kReject, EncodeReject(reason, final));
    [[maybe_unused]] ssize_t n = send(c.sock.fd(), f.data(), f.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    Close(c, reason);
  }

  void Queue(Conn& c, std::string_view bytes) {
    c.out.append(bytes);
    Flush(c);
    if (!c.dead && c.out.size() - c.out_pos > options.max_output)
      Close(c, "not reading its answers (" + std::to_string(c.out.size() - c.out_pos) + " bytes queued)");
  }

  void Flush(Conn& c) {
    while (!c.dead && c.out_pos < c.out.size()) {
      const ssize_t n =
          send(c.sock.fd(), c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_pos += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        Close(c, Status::FromErrno("send", errno).ToString());
        return;
      }
    }
    if (c.out_pos == c.out.size()) {
      c.out.clear();
      c.out_pos = 0;
      if (c.eof && !c.parked && c.kind == Conn::Kind::kQuery) Close(c, "query peer done", true);
    }
  }

  void Accept() {
    while (true) {
      const int fd = accept4(listener.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // (EMFILE comes before the queue is looked at: only a connection
        // taken off it means there may be more.)
        if ((errno == EMFILE || errno == ENFILE) && reserve_fd >= 0 && RefuseWithoutFd()) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
          Log(Status::FromErrno("accept", errno).ToString());
        return;
      }
      const int one = 1;  // answers and WELCOME go out at once, not after a delayed ACK
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<Conn>();
      c->sock = Socket(fd);
      c->peer = PeerName(fd);
      c->opened = c->last_input = Clock::now();
      if (!MakeRoom()) {
        Log("refused " + c->peer + ": " + std::to_string(options.max_connections) + " connections open already");
        continue;  // the Socket closes it
      }
      conns.push_back(std::move(c));
    }
  }

  // Out of file descriptors: the reserve one makes room to accept and close
  // the waiting connection. Logged at most every 10 s, with a count. False
  // when no connection was waiting.
  bool RefuseWithoutFd() {
    const int err = errno;
    close(reserve_fd);
    const int fd = accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ++fd_refusals;
    const auto now = Clock::now();
    if (fd_refusal_logged == Clock::time_point{} || now - fd_refusal_logged > std::chrono::seconds(10)) {
      fd_refusal_logged = now;
      Log("refused " + std::to_string(fd_refusals) + " connection(s): " + Status::FromErrno("accept", err).ToString() +
          " (raise the open-file limit, ulimit -n, or lower " + options.max_connections_word + ")");
      fd_refusals = 0;
    }
    return true;
  }

  // Before a new connection is taken: within max_pending and
  // max_connections, evicting the oldest pending connection if need be --
  // after reading what it has sent, so that a peer whose first bytes are
  // already here is served rather than evicted. False when no room.
  bool MakeRoom() {
    while (true) {
      size_t open = 0, pending = 0;
      Conn* oldest = nullptr;
      for (auto& o : conns) {
        if (o->dead) continue;
        ++open;
        if (!o->pending()) continue;
        ++pending;
        if (!oldest || o->opened < oldest->opened) oldest = o.get();
      }
      if (pending < options.max_pending && open < options.max_connections) return true;
      if (oldest == nullptr) return false;
      Read(*oldest);
      if (!oldest->pending()) continue;  // identified (or closed): count again
      Close(*oldest, "evicted for a new connection (" + std::to_string(pending) +
                         " connections before their handshake, the oldest goes)");
    }
  }

  // A connection just turned out to be a query peer: makes room within
  // max_queries, or refuses it (false, closed).
  bool AdmitQuery(Conn& c) {
    size_t queries = 0;
    Conn* slow = nullptr;    // oldest incomplete line
    Conn* idle = nullptr;    // longest idle, nothing asked
    Conn* parked = nullptr;  // longest parked `at` query
    for (auto& o : conns) {
      if (o.get() == &c || !o->query()) continue;
      ++queries;
      if (o->out_pos < o->out.size()) continue;  // answers in flight: max_output deals with it
      if (o->parked) {
        if (!parked || o->last_input < parked->last_input) parked = o.get();
      } else if (!o->in.empty()) {
        if (!slow || o->line_start < slow->line_start) slow = o.get();
      } else if (!idle || o->last_input < idle->last_input) {
        idle = o.get();
      }
    }
    if (queries < options.max_queries) return true;
    Conn* victim = slow ? slow : idle ? idle : parked;
    const std::string why = "evicted for a new query connection (" + std::to_string(queries) + " open, " +
                            (slow   ? "the slowest line goes)"
                             : idle ? "the longest idle goes)"
                                    : "the longest parked goes)");
    if (victim == nullptr) {
      Queue(c,
            ErrorAnswer("the root serves " + std::to_string(queries) + " query connections already; try again", false));
      Close(c, "refused: " + std::to_string(queries) + " query connections busy");
      return false;
    }
    Close(*victim, why);
    return true;
  }

  void HandleFrame(Conn& c, const Frame& f) {
    const uint64_t bytes = kFrameHeaderBytes + f.payload.size();
    if (c.slot < 0) {
      Hello hello;
      bool final = false;
      if (std::string why = AdmitHello(f, options.params, options.token, &hello, &final); !why.empty())
        return Reject(c, why, final);
      // A site reconnecting before the root noticed its old connection drop:
      // the new connection wins.
      for (auto& other : conns)
        if (other.get() != &c && other->slot >= 0 && !other->dead &&
            state.slots()[static_cast<size_t>(other->slot)].name == hello.name)
          Close(*other, "replaced by a new connection from " + c.peer);
      auto slot = state.Attach(hello.name, c.peer);
      if (!slot.ok()) return Reject(c, slot.status().ToString(), true);
      if (owner.size() <= *slot) owner.resize(*slot + 1, nullptr);
      owner[*slot] = &c;
      c.slot = *slot;
      changed = true;
      Welcome w;
      w.params = options.params;
      w.slot = *slot;
      w.root_id = root_id;
      const std::string reply = c.frames_out.Encode(FrameType::kWelcome, EncodeWelcome(w));
      // Known now (token and name checked): its frames may be as large as a snapshot.
      c.frames->set_max_payload(options.max_payload);
      state.CountFrame(*slot, bytes + reply.size());
      Log("site " + hello.name + " connected from " + c.peer);
      Queue(c, reply);
      return;
    }
    const auto slot = static_cast<uint32_t>(c.slot);
    if (std::string why = TakeSiteFrame(state, slot, &c.synced, f, bytes); !why.empty()) return Reject(c, why);
    changed = true;
  }

  void ProcessLines(Conn& c) {
    while (!c.dead && !c.parked) {
      const size_t nl = c.in.find('\n');
      if (nl == std::string::npos) {
        if (c.in.size() > kMaxQueryLine) Close(c, "query line longer than " + std::to_string(kMaxQueryLine) + " bytes");
        return;
      }
      std::string line = c.in.substr(0, nl);
      c.in.erase(0, nl + 1);
      c.line_start = Clock::now();  // what is left began now at the earliest
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      auto q = ParseQuery(line, options.params.eps);
      if (!q.ok()) {
        Queue(c, ErrorAnswer(q.status().ToString(), line.find(" json") != std::string::npos));
        continue;
      }
      if (q->at && !state.Reached(*q->at)) {
        c.parked = *q;
        c.park_deadline = Clock::now() + std::chrono::milliseconds(q->wait_ms);
        return;
      }
      if (q->kind == Query::Kind::kForget) {
        changed = true;  // `at` queries may be waiting on nothing now
        // A finished site may still be connected (heartbeating): it goes too.
        for (auto& o : conns)
          if (o->slot >= 0 && !o->dead && state.slots()[static_cast<size_t>(o->slot)].name == q->site &&
              state.slots()[static_cast<size_t>(o->slot)].state == SiteSlot::State::kFinished)
            Close(*o, "forgotten by a query");
      }
      Queue(c, AnswerQuery(state, *q));
    }
  }

  void Read(Conn& c) {
    char buf[1 << 16];
    for (int round = 0; round < 4 && !c.dead; ++round) {
      const ssize_t n = recv(c.sock.fd(), buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) Close(c, Status::FromErrno("recv", errno).ToString());
        return;
      }
      if (n == 0) {
        if (c.kind == Conn::Kind::kQuery && (c.parked || c.out_pos < c.out.size())) {
          c.eof = true;  // answer what was asked, then close
          return;
        }
        Close(c, c.kind == Conn::Kind::kSite && c.slot >= 0 ? "site disconnected" : "peer closed the connection",
              c.kind == Conn::Kind::kQuery);
        return;
      }
      c.last_input = Clock::now();
      if (c.kind == Conn::Kind::kUnknown) {
        if (static_cast<uint8_t>(buf[0]) == kWireMagic0) {
          c.kind = Conn::Kind::kSite;
          // Until its HELLO is accepted, a peer gets no more than a HELLO's room.
          c.frames = std::make_unique<FrameReader>(c.peer, std::min(kMaxHandshakePayload, options.max_payload));
        } else {
          c.kind = Conn::Kind::kQuery;
          if (!AdmitQuery(c)) return;
        }
      }
      if (c.kind == Conn::Kind::kSite) {
        c.frames->Append(buf, static_cast<size_t>(n));
        Frame f;
        while (!c.dead) {
          auto more = c.frames->Next(&f);
          if (!more.ok()) return Reject(c, more.status().ToString());
          if (!*more) break;
          HandleFrame(c, f);
        }
        if (!c.dead && c.frames->duplicates() > c.duplicates_logged) {
          // Applied once: the sequence says it was delivered already.
          if (c.duplicates_logged == 0)
            Log(c.Describe(state) + ": dropped a frame delivered twice (its sequence was already seen)");
          c.duplicates_logged = c.frames->duplicates();
        }
      } else {
        if (c.in.empty()) c.line_start = c.last_input;
        c.in.append(buf, static_cast<size_t>(n));
        ProcessLines(c);
        if (c.parked) return;  // read no more until it is answered
      }
    }
  }

  void Timers() {
    const auto now = Clock::now();
    if (options.forget_after.count() > 0)
      for (const std::string& name : state.ForgetStale(now, options.forget_after)) {
        Log("forgot site " + name + ": stale for more than " + std::to_string(options.forget_after.count()) + " ms");
        changed = true;
      }
    for (auto& cp : conns) {
      Conn& c = *cp;
      if (c.dead) continue;
      if (c.parked && now >= c.park_deadline) {
        const Query q = *c.parked;
        c.parked.reset();
        c.line_start = c.last_input = now;
        Queue(c, AtTimeoutAnswer(state, q));
        ProcessLines(c);
        if (!c.dead && c.eof) Flush(c);
        continue;
      }
      const bool handshaking = c.kind == Conn::Kind::kUnknown || (c.kind == Conn::Kind::kSite && !c.synced);
      if (handshaking && now - c.opened > options.handshake_timeout) {
        Close(c, "silent through the handshake for " + std::to_string(options.handshake_timeout.count()) + " ms");
      } else if (c.kind == Conn::Kind::kSite && c.synced && now - c.last_input > options.site_idle_timeout) {
        Close(c, "site silent for " + std::to_string(options.site_idle_timeout.count()) + " ms");
      } else if (c.kind == Conn::Kind::kQuery && !c.parked && !c.in.empty() &&
                 now - c.line_start > options.query_line_timeout) {
        Close(c, "query line not complete within " + std::to_string(options.query_line_timeout.count()) + " ms");
      } else if (c.kind == Conn::Kind::kQuery && !c.parked && now - c.last_input > options.query_idle_timeout) {
        Close(c, "query connection idle for " + std::to_string(options.query_idle_timeout.count()) + " ms");
      }
    }
  }

  void ServeParked() {
    for (auto& cp : conns) {
      Conn& c = *cp;
      if (c.dead || !c.parked || !state.Reached(*c.parked->at)) continue;
      const Query q = *c.parked;
      c.parked.reset();
      c.line_start = c.last_input = Clock::now();
      Queue(c, AnswerQuery(state, q));
      ProcessLines(c);
      if (!c.dead && c.eof && !c.parked) Flush(c);
    }
  }
};

RootServer::RootServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RootServer::~RootServer() {
  if (impl_->reserve_fd >= 0) close(impl_->reserve_fd);
  if (impl_->wake[0] >= 0) close(impl_->wake[0]);
  if (impl_->wake[1] >= 0) close(impl_->wake[1]);
}

Result<std::unique_ptr<RootServer>> RootServer::Start(const RootServerOptions& options) {
  MOMENTA_RETURN_IF_ERROR(CheckEps(options.params.eps, "root"));
  MOMENTA_RETURN_IF_ERROR(ValidateWindowSpec(options.params.spec));
  auto impl = std::make_unique<Impl>(options);
  auto listener = ListenTcp(options.listen, &impl->port);
  if (!listener.ok()) return listener.status();
  impl->listener = std::move(*listener);
  if (pipe2(impl->wake, O_NONBLOCK | O_CLOEXEC) != 0) return Status::FromErrno("pipe", errno);
  impl->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Room for every connection: the soft open-file limit is raised as far as
  // the hard one allows (descriptors beside the connections: listener,
  // wake pipe, reserve, stdio and a margin).
  const rlim_t needed = static_cast<rlim_t>(options.max_connections) + 32;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < needed) {
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? needed : std::min(needed, lim.rlim_max);
    (void)setrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < needed)
      impl->Log("the open-file limit is " + std::to_string(lim.rlim_cur) + " (hard), fewer than the " +
                std::to_string(options.max_connections) + " connections allowed; more are refused");
  }
  impl->root_id = std::random_device{}() | (static_cast<uint64_t>(std::random_device{}()) << 32);
  return std::unique_ptr<RootServer>(new RootServer(std::move(impl)));
}

uint16_t RootServer::port() const { return impl_->port; }

void RootServer::Stop() {
  impl_->stop = true;
  const char b = 1;
  [[maybe_unused]] ssize_t n = write(impl_->wake[1], &b, 1);
}

Status RootServer::Run() {
  Impl& s = *impl_;
  std::vector<pollfd> fds;
  while (!s.stop) {
    fds.clear();
    fds.push_back({s.wake[0], POLLIN, 0});
    fds.push_back({s.listener.fd(), POLLIN, 0});
    for (auto& c : s.conns) {
      short events = 0;
      if (!c->parked && !c->eof) events |= POLLIN;
      if (c->out_pos < c->out.size()) events |= POLLOUT;
      fds.push_back({c->sock.fd(), events, 0});
    }
    const int ready = poll(fds.data(), fds.size(), 100);
    if (ready < 0 && errno != EINTR) return Status::FromErrno("poll", errno);
    if (fds[0].revents) {
      char drain[64];
      while (read(s.wake[0], drain, sizeof drain) > 0) {}
    }
    const size_t before = s.conns.size();
    for (size_t i = 0; i < before; ++i) {
      Conn& c = *s.conns[i];
      const short re = fds[i + 2].revents;
      if (c.dead || re == 0) continue;
      if (re & POLLOUT) s.Flush(c);
      if (!c.dead && (re & (POLLIN | POLLHUP | POLLERR))) s.Read(c);
    }
    if (fds[1].revents & POLLIN) s.Accept();
    s.Timers();
    if (s.changed) {
      s.changed = false;
      s.ServeParked();
    }
    std::erase_if(s.conns, [](const std::unique_ptr<Conn>& c) { return c->dead; });
  }
  for (auto& c : s.conns) s.Close(*c, "root shutting down");
  s.conns.clear();
  return Status::OK();
}

}  // namespace momenta
