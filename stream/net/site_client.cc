#include "stream/net/site_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <thread>
#include <utility>

#include "stream/net/name_frames.h"
#include "stream/net/site_names.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_frame.h"

namespace momenta {

namespace {
using Clock = std::chrono::steady_clock;

// Reads one frame within `timeout` (the handshake reply).
Result<Frame> ReadFrame(FrameReader& reader, int fd, const std::string& peer, std::chrono::milliseconds timeout,
                        int cancel_fd) {
  const auto deadline = Clock::now() + timeout;
  char buf[4096];
  Frame f;
  while (true) {
    auto more = reader.Next(&f);
    if (!more.ok()) return more.status();
    if (*more) return f;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return Status::IOError(peer, "no answer to the handshake");
    pollfd p[2] = {{fd, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
    if (poll(p, cancel_fd >= 0 ? 2 : 1, static_cast<int>(left.count())) < 0 && errno != EINTR)
      return Status::FromErrno(peer, errno);
    if (p[1].revents & POLLIN) return Status::IOError(peer, "interrupted");
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return Status::IOError(peer, "the root closed the connection during the handshake");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::FromErrno(peer, errno);
    }
    reader.Append(buf, static_cast<size_t>(n));
  }
}
}  // namespace

Result<std::unique_ptr<SiteClient>> SiteClient::Create(const SiteClientOptions& options) {
  MOMENTA_RETURN_IF_ERROR(CheckSiteName(options.name));
  return std::unique_ptr<SiteClient>(new SiteClient(options));
}

void SiteClient::Log(const std::string& line) {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "momenta site %s: %s\n", options_.name.c_str(), line.c_str());
  }
}

Status SiteClient::TryConnect() {
  const std::string peer = "root " + options_.root.ToString();
  auto sock = ConnectTcp(options_.root, options_.connect_timeout, options_.cancel_fd);
  if (!sock.ok()) return sock.status();
  Hello h;
  h.name = options_.name;
  h.token = options_.token;
  h.params = params_;
  h.version = names_ != nullptr ? kProtocolVersion : kUnnamedProtocolVersion;
  // Each connection numbers its frames from 0, both ways.
  frames_out_ = FrameWriter();
  frames_in_ = std::make_unique<FrameReader>(peer, kMaxHandshakePayload);
  const std::string hello = frames_out_.Encode(FrameType::kHello, EncodeHello(h));
  MOMENTA_RETURN_IF_ERROR(SendAll(sock->fd(), hello, options_.io_timeout, peer, options_.cancel_fd));
  auto reply = ReadFrame(*frames_in_, sock->fd(), peer, options_.io_timeout, options_.cancel_fd);
  if (!reply.ok()) return reply.status();
  if (reply->type == FrameType::kReject) {
    auto r = DecodeReject(reply->payload);
    if (!r.ok()) return r.status();
    // A refusal of this connection's bytes (damaged on the way) is worth
    // another connection; one of the site itself is not.
    if (!r->final) return Status::IOError(peer, "refused this connection: " + r->reason);
    return Status::InvalidArgument(peer, "refused this site: " + r->reason);
  }
  if (reply->type != FrameType::kWelcome) return Status::Corruption(peer, "expected WELCOME");
  auto w = DecodeWelcome(reply->payload);
  if (!w.ok()) return w.status();
  if (!params_) {
    SiteOptions so;
    so.spec = w->params.spec;
    so.eps = w->params.eps;
    auto site = Site::Create(0, so);
    if (!site.ok()) return site.status();
    site_ = std::move(*site);
    mirror_ = std::make_unique<SiteMirror>(SIZE_MAX);
    params_ = w->params;
  } else if (!(w->params == *params_)) {
    return Status::InvalidArgument(peer, "now runs " + w->params.ToString() + ", this site " + params_->ToString());
  }
  TrafficCounts hs;
  hs.frames = 1;
  hs.bytes = hello.size();
  sent_ += hs;
  sock_ = std::move(*sock);
  ++connections_;
  sent_clock_.reset();
  // The whole state first: it replaces what the root held for this site.
  const int64_t at = quiet_ ? -kMaxTime : finished_ ? last_time_ : clock_.value_or(-kMaxTime);
  const auto snapshot = quiet_ ? std::vector<Message>{} : finished_ ? final_snapshot_ : mirror_->Snapshot(at);
  if (!Send(FrameType::kSnapshot, at, snapshot))
    return Status::IOError(peer, "lost while sending the snapshot: " + lost_reason_);
  if (finished_ && !quiet_ && !SendFinal(drain_))
    return Status::IOError(peer, "lost while sending FINAL: " + lost_reason_);
  Log(std::string(connections_ == 1 ? "connected to " : "reconnected to ") + options_.root.ToString() + ", " +
      w->params.ToString() +
      (connections_ == 1 ? "" : "; state resent (" + std::to_string(snapshot.size()) + " messages)"));
  backoff_ = std::chrono::milliseconds(0);
  return Status::OK();
}

Status SiteClient::ConnectWithin(std::chrono::milliseconds give_up) {
  const auto deadline = Clock::now() + give_up;
  auto wait = options_.backoff_min;
  for (int attempt = 0;; ++attempt) {
    Status st = TryConnect();
    if (st.ok()) return st;
    if (st.code() == Status::Code::kInvalidArgument) return st;  // refused: retrying will not help
    if (Clock::now() + wait > deadline || Cancelled(options_.cancel_fd)) return st;
    if (attempt == 0)  // not silent while it retries
      Log(st.ToString() + "; retrying for up to " + std::to_string(give_up.count()) + " ms");
    pollfd p{options_.cancel_fd, POLLIN, 0};
    if (options_.cancel_fd < 0) {
      std::this_thread::sleep_for(wait);
    } else if (poll(&p, 1, static_cast<int>(wait.count())) > 0) {
      return Status::IOError("root " + options_.root.ToString(), "interrupted");
    }
    wait = std::min(wait * 2, options_.backoff_max);
  }
}

bool SiteClient::Reconnect() {
  if (connected()) return true;
  Status st = TryConnect();
  if (!st.ok()) {
    next_attempt_ = Clock::now() + options_.backoff_min;
    return false;
  }
  return true;
}

void SiteClient::Disconnect(const std::string& why) {
  if (!connected()) return;
  sock_.Close();
  lost_reason_ = why;
  Log("lost the root: " + why + "; will reconnect (an attempt at least every " +
      std::to_string(options_.backoff_max.count() * 5 / 4) + " ms) and resend its state");
  backoff_ = options_.backoff_min;
  next_attempt_ = Clock::now() + backoff_;
}

void SiteClient::MaybeReconnect() {
  if (connected() || !params_ || Clock::now() < next_attempt_) return;
  Status st = TryConnect();
  if (st.ok()) return;
  backoff_ = std::min(std::max(backoff_ * 2, options_.backoff_min), options_.backoff_max);
  jitter_ ^= jitter_ << 13;
  jitter_ ^= jitter_ >> 7;
  jitter_ ^= jitter_ << 17;
  const auto spread = std::chrono::milliseconds(static_cast<int64_t>(jitter_ % (backoff_.count() / 4 + 1)));
  next_attempt_ = Clock::now() + backoff_ + spread;
  if (st.code() == Status::Code::kInvalidArgument) Log(st.ToString());
}

void SiteClient::CheckIncoming() {
  if (!connected()) return;
  // The root sends nothing after WELCOME but a REJECT before it closes; a
  // WELCOME delivered twice is dropped by its sequence.
  while (connected()) {
    pollfd p{sock_.fd(), POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return;
    char buf[4096];
    const ssize_t n = recv(sock_.fd(), buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return Disconnect("the root closed the connection");
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        Disconnect(Status::FromErrno("recv", errno).ToString());
      return;
    }
    frames_in_->Append(buf, static_cast<size_t>(n));
    Frame f;
    auto more = frames_in_->Next(&f);
    if (!more.ok()) return Disconnect("unexpected bytes from the root: " + more.status().ToString());
    if (!*more) continue;  // a partial frame (or only a duplicate): wait for more
    if (f.type == FrameType::kReject) {
      auto r = DecodeReject(f.payload);
      return Disconnect("the root closed the connection: " + (r.ok() ? r->reason : std::string("?")));
    }
    return Disconnect("unexpected frame type " + std::to_string(static_cast<int>(f.type)) + " from the root");
  }
}

bool SiteClient::SendFinal(const std::vector<Message>& drain) {
  return Send(FrameType::kFinal, clock_.value_or(-kMaxTime), drain);
}

bool SiteClient::Send(FrameType type, int64_t clock, const std::vector<Message>& messages) {
  if (names_ != nullptr)  // the names of the items the frame turns on, first
    for (const auto& chunk : names_->NamesFor(messages, type == FrameType::kSnapshot))
      if (!SendNames(chunk)) return false;
  TrafficCounts c;
  c.messages = messages.size();
  for (const Message& m : messages) c.words += MessageWords(m);
  if (!SendFrame(frames_out_.Encode(type, type == FrameType::kFinal ? EncodeFinal(last_time_, clock, messages)
                                                                    : EncodeBatch(clock, messages)),
                 &c))
    return false;
  if (type == FrameType::kSnapshot) resync_ += c;
  sent_clock_ = clock;
  return true;
}

bool SiteClient::SendNames(const std::vector<ItemName>& names) {
  TrafficCounts c;
  return SendFrame(frames_out_.Encode(FrameType::kNames, EncodeNames(names)), &c);
}

bool SiteClient::SendFrame(const std::string& frame, TrafficCounts* counts) {
  Status st = SendAll(sock_.fd(), frame, options_.io_timeout, "root " + options_.root.ToString(), options_.cancel_fd);
  if (!st.ok()) {
    Disconnect(st.ToString());
    return false;
  }
  counts->frames = 1;
  counts->bytes = frame.size();
  sent_ += *counts;
  return true;
}

void SiteClient::Tick(int64_t t, const std::vector<Arrival>& arrivals) {
  messages_.clear();
  // First every time before t at which a window changes with no arrivals
  // (an expiry): the site's state at any time is then the one after its last
  // tick at or before it, which is what the root answers for.
  for (int64_t c = site_->NextChange(); c < t; c = site_->NextChange()) site_->Tick(c, {}, &messages_);
  site_->Tick(t, arrivals, &messages_);
  for (const Message& m : messages_) {
    [[maybe_unused]] Status st = mirror_->Apply(m);
  }
  clock_ = t;
  if (names_ != nullptr) names_->Prune(*site_, *mirror_, t);
  CheckIncoming();
  if (!connected()) return MaybeReconnect();
  if (!messages_.empty() && !quiet_) Send(FrameType::kBatch, t, messages_);
}

void SiteClient::Finish() {
  if (finished_) return;
  finished_ = true;
  last_time_ = clock_.value_or(-kMaxTime);
  final_snapshot_ = mirror_->Snapshot(last_time_);
  std::vector<Message>& drain = drain_;
  if (clock_) {
    for (int64_t t = site_->NextChange(); t < kMaxTime; t = site_->NextChange()) {
      messages_.clear();
      site_->Tick(t, {}, &messages_);
      for (const Message& m : messages_) {
        [[maybe_unused]] Status st = mirror_->Apply(m);
      }
      drain.insert(drain.end(), messages_.begin(), messages_.end());
      clock_ = t;
    }
  }
  CheckIncoming();
  if (!connected()) return MaybeReconnect();  // the reconnection sends FINAL
  if (!quiet_) SendFinal(drain);
}

void SiteClient::SetQuiet(bool quiet) {
  const bool was = std::exchange(quiet_, quiet);
  if (!was || quiet || !connected()) return;
  const int64_t at = clock_.value_or(-kMaxTime);
  sent_clock_.reset();
  if (finished_) {
    if (Send(FrameType::kSnapshot, last_time_, final_snapshot_)) SendFinal(drain_);
    return;
  }
  (void)Send(FrameType::kSnapshot, at, mirror_->Snapshot(at));
}

void SiteClient::Flush() {
  CheckIncoming();
  if (!connected()) return MaybeReconnect();
  if (quiet_) return;
  if (clock_ && sent_clock_ != clock_) Send(FrameType::kBatch, *clock_, {});
}

void SiteClient::Heartbeat() {
  CheckIncoming();
  if (!connected()) return MaybeReconnect();
  if (quiet_) return;
  Send(FrameType::kBatch, clock_.value_or(-kMaxTime), {});
}

}  // namespace momenta
