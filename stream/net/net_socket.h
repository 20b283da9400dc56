// TCP plumbing for the monitor's root and sites: HOST:PORT addresses, an
// owning socket handle, listening, connecting with a timeout, and sending
// with a deadline. Plain POSIX sockets; every failure is a Status naming the
// peer ("IO error: connect 127.0.0.1:7000: Connection refused"). SIGPIPE is
// never raised: sends use MSG_NOSIGNAL.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

struct HostPort {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string ToString() const;
};

// "HOST:PORT", ":PORT" or "PORT" (host defaults to loopback), "[::1]:PORT"
// for IPv6. InvalidArgument naming `flag` otherwise.
Result<HostPort> ParseHostPort(std::string_view text, std::string_view flag);

// Owns one file descriptor; closes it on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { Close(); }
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Close();

 private:
  int fd_ = -1;
};

// Listens on `at` (port 0: any free port; SO_REUSEADDR so a restarted root
// gets its port back); *bound receives the port actually bound.
Result<Socket> ListenTcp(const HostPort& at, uint16_t* bound);
// Connects within `timeout`; the socket is returned blocking, TCP_NODELAY set.
// `cancel_fd` (when >= 0) is polled beside the socket: once it is readable
// the wait ends at once with IOError "... interrupted" (a stop signal's
// self-pipe, say). The same holds for SendAll.
Result<Socket> ConnectTcp(const HostPort& to, std::chrono::milliseconds timeout, int cancel_fd = -1);
Status SetNonBlocking(int fd);
// Sends every byte or fails: IOError on a closed peer, or when the peer has
// not taken them within `timeout` (a root that stopped reading).
Status SendAll(int fd, std::string_view bytes, std::chrono::milliseconds timeout, std::string_view peer,
               int cancel_fd = -1);
// True when `cancel_fd` is valid and readable now.
bool Cancelled(int cancel_fd);
// "ADDR:PORT" of the peer of a connected socket ("?" when unknown).
std::string PeerName(int fd);

}  // namespace momenta
