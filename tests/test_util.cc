#include "tests/test_util.h"

#include "storage/array/array_file.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace momenta::testing {

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/momenta-test-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

TmpfsMount::TmpfsMount(const std::string& dir, const std::string& size) : dir_(dir) {
  const std::string options = "size=" + size;
  if (::mount("momenta-test", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0)
    mounted_ = true;
  else
    error_ = std::strerror(errno);
}

TmpfsMount::~TmpfsMount() {
  if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
}

namespace {

// write(2) with SIGPIPE blocked in this thread: a child that exits before
// reading all its input gives EPIPE (the test sees its exit status) instead
// of killing the test binary. A SIGPIPE raised meanwhile is consumed.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  const ssize_t w = write(fd, data, size);
  const int saved = errno;
  // Even a write that returns a partial count may have raised it.
  const timespec now{};
  while (sigtimedwait(&pipe_only, nullptr, &now) > 0) {}
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + ": " + strerror(rc));

  CommandResult result;
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  }
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  while (out_fd >= 0 || err_fd >= 0 || in_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < n; ++k) {
      if (!fds[k].revents) continue;
      if (fds[k].fd == in_fd) {
        ssize_t w = WriteWithoutSigpipe(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += w;
        if (w < 0 || written == input.size()) {
          close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t r = read(fds[k].fd, buf, sizeof buf);
      std::string& dst = fds[k].fd == out_fd ? result.out : result.err;
      if (r > 0) {
        dst.append(buf, r);
      } else {
        close(fds[k].fd);
        (fds[k].fd == out_fd ? out_fd : err_fd) = -1;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

CommandResult RunCli(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv{MOMENTA_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, input);
}

bool HaveNumpy() {
  static const bool have = [] {
    if (access(MOMENTA_PYTHON, X_OK) != 0) return false;
    return RunCommand({MOMENTA_PYTHON, "-c", "import numpy"}).exit_code == 0;
  }();
  return have;
}

CommandResult RunPython(const std::string& code) { return RunCommand({MOMENTA_PYTHON, "-c", code}); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

uint64_t TestSeed() {
  uint64_t seed = 0;
  if (const char* s = std::getenv("MOMENTA_SEED"); s && *s) {
    seed = std::strtoull(s, nullptr, 10);
  } else {
    seed = std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  }
  std::printf("[ seed ] MOMENTA_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

Status WriteF8Array(const std::string& path, std::span<const double> values) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {values.size()};
  auto array = ArrayFile::Create(path, DType::kF8, shape, io);
  if (!array.ok()) return array.status();
  std::vector<Value> v(values.size());
  for (size_t i = 0; i < values.size(); ++i) v[i] = Value::Float(values[i]);
  MOMENTA_RETURN_IF_ERROR((*array)->WriteValues(0, v));
  return (*array)->Sync();
}

}  // namespace momenta::testing
