#include "tests/cli_background.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "tests/test_util.h"

extern char** environ;

namespace momenta::testing {

Background::Background(const std::vector<std::string>& args, const std::string& dir, const std::string& tag,
                       bool stdin_pipe) {
  std::vector<std::string> argv = {MOMENTA_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  err_path_ = dir + "/" + tag + ".err";
  out_path_ = dir + "/" + tag + ".out";
  const std::string& out_path = out_path_;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  int in[2] = {-1, -1};
  if (stdin_pipe && pipe2(in, O_CLOEXEC) == 0) {
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
  if (in[0] >= 0) close(in[0]);
  stdin_fd_ = in[1];
  EXPECT_GT(pid_, 0) << "cannot start " << argv[0];
}

bool Background::WaitCatching(int wait_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  const uint64_t want = (1ull << (SIGINT - 1)) | (1ull << (SIGTERM - 1));
  while (pid_ > 0) {
    const std::string status = ReadFileBytes("/proc/" + std::to_string(pid_) + "/status");
    const size_t at = status.find("SigCgt:");
    if (at != std::string::npos && (std::stoull(status.substr(at + 7), nullptr, 16) & want) == want) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

Background::~Background() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void Background::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

void Background::Kill(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int Background::Wait(int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (pid_ > 0) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

std::string Background::Err() const { return ReadFileBytes(err_path_); }

std::string Background::Out() const { return ReadFileBytes(out_path_); }

bool Background::WaitErr(const std::string& text, int wait_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (Err().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool Background::WriteStdin(const std::string& bytes) {
  // SIGPIPE blocked meanwhile (and consumed): a child that died gives EPIPE.
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  size_t done = 0;
  while (stdin_fd_ >= 0 && done < bytes.size()) {
    const ssize_t n = write(stdin_fd_, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const timespec now{};
  while (sigtimedwait(&pipe_only, nullptr, &now) > 0) {}
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return stdin_fd_ >= 0 && done == bytes.size();
}

uint16_t WaitPortFile(const std::string& path, int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (access(path.c_str(), R_OK) == 0) {
      const std::string text = ReadFileBytes(path);
      if (!text.empty() && text.back() == '\n') return static_cast<uint16_t>(std::stoul(text));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

}  // namespace momenta::testing
