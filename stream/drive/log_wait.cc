#include "stream/drive/log_wait.h"

#include <sys/stat.h>

#include <cassert>
#include <chrono>

#include "storage/array/sidecar.h"

namespace momenta {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Result<std::string> WaitForLogDir(const std::string& array_path, const std::string& sidecar, StopToken stop,
                                  const NoticeFn& notice, int poll_ms) {
  assert(poll_ms >= 1);
  bool told = false;
  while (true) {
    const bool array_there = !sidecar.empty() || IsFile(array_path);
    if (array_there) {
      const std::string dir = SidecarPath(array_path, sidecar) + "/log";
      if (IsDir(dir)) return dir;
    }
    if (!told && notice) {
      notice("waiting for " + array_path + " to be written: " +
             (array_there ? "no update log in " + SidecarPath(array_path, sidecar) + " yet" : "no such file yet") +
             " (Ctrl-C stops)");
    }
    told = true;
    if (!stop.SleepUnlessStopped(std::chrono::milliseconds(poll_ms)))
      return Status::Interrupted(array_path, "stopped while waiting for its update log");
  }
}

}  // namespace momenta
