#include "storage/leftovers.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>

namespace momenta {

void RemoveFilesOfDeadProcesses(const std::string& dir, const std::vector<std::string>& prefixes,
                                std::vector<std::string>* notices) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    for (const std::string& prefix : prefixes) {
      if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
      pid_t pid = 0;
      const char* digits = name.data() + prefix.size();
      auto r = std::from_chars(digits, name.data() + name.size(), pid);
      if (r.ec != std::errc() || r.ptr != name.data() + name.size() || pid <= 0 || pid == ::getpid()) break;
      if (::kill(pid, 0) == 0 || errno == EPERM) break;  // alive (or another user's)
      const std::string path = it->path().string();
      if (::unlink(path.c_str()) == 0 && notices)
        notices->push_back("removed " + path + ", left by a command that was killed (process " +
                           std::to_string(pid) + " is gone)");
      break;
    }
  }
}

}  // namespace momenta
