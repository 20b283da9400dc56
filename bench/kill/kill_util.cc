// Process plumbing for the kill driver; see kill_util.h.
#include "bench/kill/kill_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

extern char** environ;

namespace momenta::kill {
namespace {

std::atomic<bool> g_stop{false};
std::mutex g_mu;
std::set<pid_t> g_children;
std::string g_scratch;  // the live scratch folder, for the stop path

void OnStop(int) { g_stop.store(true); }

}  // namespace

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t RoundSeed(uint64_t seed, uint64_t stream, uint64_t round) { return Mix(seed ^ Mix(stream) ^ Mix(round + 1)); }

void InstallStopHandler() {
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool StopRequested() { return g_stop.load(); }

void RegisterChild(pid_t pid) {
  std::lock_guard<std::mutex> l(g_mu);
  g_children.insert(pid);
}

void UnregisterChild(pid_t pid) {
  std::lock_guard<std::mutex> l(g_mu);
  g_children.erase(pid);
}

void KillRegisteredChildren() {
  std::lock_guard<std::mutex> l(g_mu);
  for (pid_t p : g_children) {
    ::kill(p, SIGKILL);
    waitpid(p, nullptr, 0);
  }
  g_children.clear();
}

void DieWithParent() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The driver's handlers are not the child's: a Ctrl-C on the terminal
  // reaches the whole group, and the driver decides.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
}

int WaitChild(pid_t pid, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      UnregisterChild(pid);
      return status;
    }
    if (r < 0 && errno != EINTR) {
      UnregisterChild(pid);
      return 0;
    }
    if (Clock::now() >= deadline || StopRequested()) return -1;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
  UnregisterChild(pid);
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.empty() ? "/dev/null" : out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.empty() ? "/dev/null" : err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // The spawned program keeps the default dispositions (SIGINT, SIGPIPE).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  if (posix_spawn(&pid, cargv[0], &fa, &attr, cargv.data(), environ) != 0) pid = -1;
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (pid > 0) RegisterChild(pid);
  return pid;
}

std::string ReadWholeFile(const std::string& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

int RunToEnd(const std::vector<std::string>& argv, const std::string& tmp_dir, int timeout_ms, std::string* out,
             std::string* err) {
  const std::string o = tmp_dir + "/run.out", e = tmp_dir + "/run.err";
  const pid_t pid = Spawn(argv, o, e);
  if (pid < 0) return -1;
  int status = WaitChild(pid, timeout_ms);
  if (status == -1) {
    KillAndReap(pid);
    status = -1;
  }
  if (out) *out = ReadWholeFile(o);
  if (err) *err = ReadWholeFile(e);
  ::unlink(o.c_str());
  ::unlink(e.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

bool Scratch::Make(const std::string& parent, uint64_t min_free_bytes, Scratch* out, std::string* error) {
  struct statvfs v {};
  if (::statvfs(parent.c_str(), &v) != 0) {
    *error = parent + ": " + std::strerror(errno);
    return false;
  }
  const uint64_t free_bytes = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  if (free_bytes < min_free_bytes) {
    *error = parent + ": only " + std::to_string(free_bytes >> 20) + " MiB free, the driver needs " +
             std::to_string(min_free_bytes >> 20) + " MiB";
    return false;
  }
  out->path_ = parent + "/kill-" + std::to_string(::getpid());
  std::error_code ec;
  std::filesystem::create_directories(out->path_, ec);
  if (ec) {
    *error = out->path_ + ": " + ec.message();
    return false;
  }
  std::lock_guard<std::mutex> l(g_mu);
  g_scratch = out->path_;
  return true;
}

Scratch::~Scratch() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  std::lock_guard<std::mutex> l(g_mu);
  if (g_scratch == path_) g_scratch.clear();
}

void RemoveScratchNow() {
  std::string path;
  {
    std::lock_guard<std::mutex> l(g_mu);
    path = std::exchange(g_scratch, {});
  }
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

void Send(int fd, const Event& e) {
  while (true) {
    const ssize_t n = ::write(fd, &e, sizeof e);
    if (n == static_cast<ssize_t>(sizeof e)) return;
    if (n < 0 && errno == EINTR) continue;
    _exit(9);
  }
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

bool Drain(int fd, std::vector<Event>* out) {
  Event buf[256];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      // Writes of one Event are atomic, so reads return whole events.
      out->insert(out->end(), buf, buf + n / static_cast<ssize_t>(sizeof(Event)));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more now
  }
}

void DrainUntil(const std::vector<int>& fds, std::vector<std::vector<Event>*> outs, Clock::time_point deadline) {
  std::vector<bool> open(fds.size(), true);
  while (!StopRequested()) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    std::vector<pollfd> p;
    std::vector<size_t> which;
    for (size_t i = 0; i < fds.size(); ++i)
      if (open[i] && fds[i] >= 0) {
        p.push_back({fds[i], POLLIN, 0});
        which.push_back(i);
      }
    const int wait_us = static_cast<int>(std::chrono::duration_cast<std::chrono::microseconds>(deadline - now).count());
    if (p.empty()) {
      std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
      break;
    }
    const int ms = std::max(0, std::min(wait_us / 1000, 50));
    if (::poll(p.data(), p.size(), ms) <= 0) {
      if (ms == 0) std::this_thread::sleep_for(std::chrono::microseconds(std::min(wait_us, 1000)));
      continue;
    }
    for (size_t k = 0; k < p.size(); ++k)
      if (p[k].revents) open[which[k]] = Drain(fds[which[k]], outs[which[k]]);
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Max(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

}  // namespace momenta::kill
