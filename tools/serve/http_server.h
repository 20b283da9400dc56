// The HTTP/1.1 side of `momenta serve`, on Boost.Beast. Beast rather than
// cpp-httplib: Boost is already a dependency (libboost-dev), and Beast's
// connections are asynchronous with bounded state each, so 500 idle or
// trickling connections cost memory, not threads; httplib gives every
// connection a thread of its own.
//
// Bounds (the root's lesson: no slow peer holds the server):
//   - a request (header and body) must arrive whole within request_timeout
//     of the wait for it starting (so an idle keep-alive connection is closed
//     then too, and a trickling one cannot reset the clock byte by byte);
//     header <= 16 KiB, body <= max_body: past them it is answered 413 and
//     closed;
//   - at most max_connections at once: one more is answered 503 and closed.
// Work runs on `threads` threads; a request's answer is computed on the
// thread that read it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "storage/util/status.h"
#include "tools/serve/api.h"

namespace momenta::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;   // 0: any free port (written to port_file)
  std::string port_file;  // the bound port, written once listening
  int threads = 2;
  std::string token;  // not empty: "Authorization: Bearer <token>" required (401)
  size_t max_body = 64 << 20;
  size_t max_connections = 2048;
  // A request must arrive whole within this of the wait for it starting
  // (a keep-alive connection idle that long is closed too).
  std::chrono::milliseconds request_timeout{10000};
};

// Serves `api` until SIGINT or SIGTERM: returns 128 + the signal (130, 143)
// after closing the listener and every connection (answers in flight are
// finished, within about a second); an error to listen returns it.
Result<int> RunHttpServer(Api& api, const HttpOptions& options);

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool IsLoopback(const std::string& host);

}  // namespace momenta::serve
