#include "storage/array/leftovers.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string_view>

#include "storage/util/parse_number.h"

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
      if (!ParseInteger(std::string_view(name).substr(prefix.size()), &pid) || pid <= 0 || pid == ::getpid()) break;
      if (::kill(pid, 0) == 0 || errno == EPERM) break;  // alive (or another user's)
      const std::string path = it->path().string();
      if (::unlink(path.c_str()) == 0 && notices)
        notices->push_back("removed " + path + ", left by a command that was killed (process " + std::to_string(pid) +
                           " is gone)");
      break;
    }
  }
}

}  // namespace momenta
