#include "stream/net/net_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "storage/util/parse_number.h"

namespace momenta {

std::string HostPort::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace {
Status NotHostPort(std::string_view text, std::string_view flag) {
  std::string what = "'";
  what += text;
  what += "' is not HOST:PORT (port 0-65535)";
  return Status::InvalidArgument(flag, what);
}
}  // namespace

Result<HostPort> ParseHostPort(std::string_view text, std::string_view flag) {
  HostPort hp;
  std::string_view port = text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return NotHostPort(text, flag);
    hp.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (colon > 0) hp.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  if (!ParseInteger(port, &value) || value > 65535 || hp.host.empty()) return NotHostPort(text, flag);
  hp.port = static_cast<uint16_t>(value);
  return hp;
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void Socket::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

namespace {

struct AddrList {
  addrinfo* head = nullptr;
  ~AddrList() {
    if (head) freeaddrinfo(head);
  }
};

Status Resolve(const HostPort& hp, bool passive, AddrList* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  const std::string port = std::to_string(hp.port);
  const int rc = getaddrinfo(hp.host.c_str(), port.c_str(), &hints, &out->head);
  if (rc != 0) return Status::IOError(hp.ToString(), std::string("cannot resolve host: ") + gai_strerror(rc));
  return Status::OK();
}

}  // namespace

Status SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return Status::FromErrno("fcntl", errno);
  return Status::OK();
}

Result<Socket> ListenTcp(const HostPort& at, uint16_t* bound) {
  AddrList addrs;
  MOMENTA_RETURN_IF_ERROR(Resolve(at, true, &addrs));
  int err = 0;
  for (addrinfo* a = addrs.head; a; a = a->ai_next) {
    Socket s(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      err = errno;
      continue;
    }
    const int one = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s.fd(), a->ai_addr, a->ai_addrlen) != 0 || listen(s.fd(), 128) != 0) {
      err = errno;
      continue;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
    *bound = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    MOMENTA_RETURN_IF_ERROR(SetNonBlocking(s.fd()));
    return s;
  }
  return Status::FromErrno("listen " + at.ToString(), err);
}

bool Cancelled(int cancel_fd) {
  if (cancel_fd < 0) return false;
  pollfd p{cancel_fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

Result<Socket> ConnectTcp(const HostPort& to, std::chrono::milliseconds timeout, int cancel_fd) {
  AddrList addrs;
  MOMENTA_RETURN_IF_ERROR(Resolve(to, false, &addrs));
  int err = ECONNREFUSED;
  for (addrinfo* a = addrs.head; a; a = a->ai_next) {
    Socket s(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
    if (!s.valid()) {
      err = errno;
      continue;
    }
    if (connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        err = errno;
        continue;
      }
      pollfd p[2] = {{s.fd(), POLLOUT, 0}, {cancel_fd, POLLIN, 0}};
      const int ready = poll(p, cancel_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
      if (ready > 0 && (p[1].revents & POLLIN)) return Status::IOError("connect " + to.ToString(), "interrupted");
      if (ready <= 0) {
        err = ready == 0 ? ETIMEDOUT : errno;
        continue;
      }
      socklen_t len = sizeof err;
      if (getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) continue;
    }
    const int flags = fcntl(s.fd(), F_GETFL);
    fcntl(s.fd(), F_SETFL, flags & ~O_NONBLOCK);
    const int one = 1;
    setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
  }
  return Status::FromErrno("connect " + to.ToString(), err);
}

Status SendAll(int fd, std::string_view bytes, std::chrono::milliseconds timeout, std::string_view peer,
               int cancel_fd) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Status::FromErrno(peer, errno);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::IOError(peer, "peer is not reading (send timed out)");
    pollfd p[2] = {{fd, POLLOUT, 0}, {cancel_fd, POLLIN, 0}};
    const int ready = poll(p, cancel_fd >= 0 ? 2 : 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return Status::FromErrno(peer, errno);
    if (ready > 0 && (p[1].revents & POLLIN)) return Status::IOError(peer, "interrupted");
  }
  return Status::OK();
}

std::string PeerName(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (addr.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* in = reinterpret_cast<sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof host);
    port = ntohs(in->sin6_port);
  }
  return HostPort{host, port}.ToString();
}

}  // namespace momenta
