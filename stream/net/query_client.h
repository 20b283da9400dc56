// QueryClient: asks a root one question at a time over its line protocol
// (root_query.h) and returns the answer without its closing empty line.
// What `momenta ask` and the tests use; `nc` speaks the same protocol.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "storage/util/status.h"
#include "stream/net/net_socket.h"

namespace momenta {

class QueryClient {
 public:
  static Result<std::unique_ptr<QueryClient>> Connect(const HostPort& root, std::chrono::milliseconds timeout);
  // Sends `line` and waits up to `timeout` for the whole answer. IOError
  // when the root closes or does not answer in time.
  Result<std::string> Ask(const std::string& line, std::chrono::milliseconds timeout);
  // Sends every line at once, then reads the answers in order (pipelined:
  // one round trip for all).
  Result<std::vector<std::string>> AskAll(const std::vector<std::string>& lines, std::chrono::milliseconds timeout);

 private:
  QueryClient(Socket sock, std::string peer) : sock_(std::move(sock)), peer_(std::move(peer)) {}
  Result<std::string> ReadAnswer(std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout);
  Socket sock_;
  std::string peer_;
  std::string buf_;
};

// The key=value words of one answer line ("as_of=T sites=a/b count=12 ..."),
// by key; other words are skipped.
std::map<std::string, std::string> AnswerFields(const std::string& line);

}  // namespace momenta
