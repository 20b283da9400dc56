#include "stream/net/query_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <sstream>

namespace momenta {

Result<std::unique_ptr<QueryClient>> QueryClient::Connect(const HostPort& root, std::chrono::milliseconds timeout) {
  auto sock = ConnectTcp(root, timeout);
  if (!sock.ok()) return sock.status();
  return std::unique_ptr<QueryClient>(new QueryClient(std::move(*sock), "root " + root.ToString()));
}

Result<std::string> QueryClient::Ask(const std::string& line, std::chrono::milliseconds timeout) {
  MOMENTA_RETURN_IF_ERROR(SendAll(sock_.fd(), line + "\n", timeout, peer_));
  return ReadAnswer(std::chrono::steady_clock::now() + timeout, timeout);
}

Result<std::vector<std::string>> QueryClient::AskAll(const std::vector<std::string>& lines,
                                                     std::chrono::milliseconds timeout) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  MOMENTA_RETURN_IF_ERROR(SendAll(sock_.fd(), all, timeout, peer_));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> answers;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto a = ReadAnswer(deadline, timeout);
    if (!a.ok()) return a.status();
    answers.push_back(std::move(*a));
  }
  return answers;
}

Result<std::string> QueryClient::ReadAnswer(std::chrono::steady_clock::time_point deadline,
                                            std::chrono::milliseconds timeout) {
  while (true) {
    // An answer ends with an empty line: "\n\n" (the first line is never empty).
    if (const size_t end = buf_.find("\n\n"); end != std::string::npos) {
      std::string answer = buf_.substr(0, end);
      buf_.erase(0, end + 2);
      return answer;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Status::IOError(peer_, "no answer within " + std::to_string(timeout.count()) + " ms");
    pollfd p{sock_.fd(), POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) return Status::FromErrno(peer_, errno);
    if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char chunk[1 << 16];
    const ssize_t n = recv(sock_.fd(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0) return Status::IOError(peer_, "the root closed the connection");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::FromErrno(peer_, errno);
    }
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

std::map<std::string, std::string> AnswerFields(const std::string& line) {
  std::map<std::string, std::string> f;
  std::istringstream in(line);
  for (std::string w; in >> w;)
    if (const size_t eq = w.find('='); eq != std::string::npos) f[w.substr(0, eq)] = w.substr(eq + 1);
  return f;
}

}  // namespace momenta
