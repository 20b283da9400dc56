// Background: a CLI process the test runs beside itself (a root, a site, a
// long import), with its output in files, signals to send and waits with
// deadlines; WaitPortFile for the port it picked. Shared by the network tests
// and the CLI tests of tools/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace momenta::testing {

// A CLI process in the background (stdout and stderr to files in `dir`;
// stdin /dev/null, or with `stdin_pipe` a pipe this object keeps open and
// silent until destruction); killed with SIGKILL on destruction if still
// running.
class Background {
 public:
  Background(const std::vector<std::string>& args, const std::string& dir, const std::string& tag,
             bool stdin_pipe = false);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  int pid() const { return pid_; }
  // Waits until the process catches SIGINT and SIGTERM (its handlers are
  // installed, per /proc/PID/status); false after wait_ms.
  bool WaitCatching(int wait_ms) const;
  void Kill(int sig);
  // Writes to its stdin pipe (REQUIRES: stdin_pipe); false when it failed.
  bool WriteStdin(const std::string& bytes);
  // Closes its stdin pipe: the process reads the end of its input.
  void CloseStdin();
  // Waits for the exit; the exit code, or -1 when killed / not done in time.
  int Wait(int wait_ms);
  std::string Err() const;
  std::string Out() const;
  // Waits until its stderr contains `text` (a log line written after the
  // event a test observed by other means); false after wait_ms.
  bool WaitErr(const std::string& text, int wait_ms) const;

 private:
  int pid_ = -1;
  std::string out_path_;
  int stdin_fd_ = -1;  // the write end of its stdin pipe
  std::string err_path_;
};

// Waits until `path` holds a number (a --port-file); 0 after wait_ms.
uint16_t WaitPortFile(const std::string& path, int wait_ms);

}  // namespace momenta::testing
