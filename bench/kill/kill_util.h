// Process plumbing for the kill driver (bench/kill/kill_driver.cc): a scratch
// folder removed at exit and on Ctrl-C, children that die with the driver,
// fixed-size event messages over pipes, seeded randomness per round.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace momenta::kill {

using Clock = std::chrono::steady_clock;
inline double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// SplitMix64: the seed of round r of stream s is Mix(seed ^ Mix(s) ^ Mix(r + 1)),
// so one round's randomness does not depend on how many numbers earlier
// rounds drew (a failing round reproduces from seed + round).
uint64_t Mix(uint64_t x);
uint64_t RoundSeed(uint64_t seed, uint64_t stream, uint64_t round);

// Ctrl-C / SIGTERM: sets a flag that every loop of the driver polls; the
// driver then kills its children and removes the scratch folder.
void InstallStopHandler();
bool StopRequested();

// Children are registered so a stop (or a failure exit) kills them all.
// A forked child calls DieWithParent() first: it gets SIGKILL when the
// driver dies, whatever the reason.
void RegisterChild(pid_t pid);
void UnregisterChild(pid_t pid);
void KillRegisteredChildren();
void DieWithParent();

// Waits for `pid` up to `timeout_ms` (polling StopRequested). Returns the
// waitpid status, or -1 when it did not end in time (the child is left running).
int WaitChild(pid_t pid, int timeout_ms);
// SIGKILL and reap.
void KillAndReap(pid_t pid);

// Starts `argv` (argv[0] a path) with stdin /dev/null and stdout/stderr to
// the files given ("" : /dev/null). Returns the pid, or -1.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path);
// Runs `argv` to its end (at most timeout_ms; then killed): exit code or -1,
// with stdout and stderr captured through files in `tmp_dir`.
int RunToEnd(const std::vector<std::string>& argv, const std::string& tmp_dir, int timeout_ms, std::string* out,
             std::string* err);
std::string ReadWholeFile(const std::string& path);

// A scratch folder "<parent>/kill-<pid>" created after a free-space check;
// removed by the destructor and by RemoveScratchNow (the stop path).
class Scratch {
 public:
  // Fails (message in *error) when the parent is missing or has less than
  // `min_free_bytes` free.
  static bool Make(const std::string& parent, uint64_t min_free_bytes, Scratch* out, std::string* error);
  ~Scratch();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};
void RemoveScratchNow();

// One message over a pipe: small enough (<= PIPE_BUF) to be written whole.
struct Event {
  uint32_t kind = 0;
  uint32_t extra = 0;
  uint64_t a = 0, b = 0, c = 0;
};
static_assert(sizeof(Event) == 32);

// Writes one event; the child _exits on a broken pipe (the driver is gone).
void Send(int fd, const Event& e);
// Reads whole events available now (fd non-blocking) into *out; returns
// false at end of file (the writer closed or died).
bool Drain(int fd, std::vector<Event>* out);
// Polls `fds` (until deadline) and drains them into *outs (one vector per fd).
void DrainUntil(const std::vector<int>& fds, std::vector<std::vector<Event>*> outs, Clock::time_point deadline);
void SetNonBlocking(int fd);

// Median and maximum of `v` (0 for empty).
double Median(std::vector<double> v);
double Max(const std::vector<double>& v);

}  // namespace momenta::kill
