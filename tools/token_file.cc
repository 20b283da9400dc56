#include "tools/token_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "stream/net/handshake.h"

namespace momenta::cli {

Result<std::string> ReadToken(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(path, errno);
  std::string text;
  char buf[512];
  ssize_t n = 0;
  while ((n = read(fd, buf, sizeof buf)) > 0 && text.size() < 4096) text.append(buf, static_cast<size_t>(n));
  close(fd);
  if (n < 0) return Status::FromErrno(path, errno);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  if (text.empty()) return Status::InvalidArgument(path, "the token file is empty");
  if (text.size() > kMaxHandshakeString) return Status::InvalidArgument(path, "the token is longer than 256 bytes");
  return text;
}

}  // namespace momenta::cli
