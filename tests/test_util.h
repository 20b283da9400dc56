// Helpers shared by the tests: scratch folders, running the CLI, and NumPy.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/util/status.h"

namespace momenta::testing {

// A fresh empty folder under $TMPDIR (or /tmp), removed with its contents when
// the object goes out of scope.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A small tmpfs mounted on `dir` for disk-full tests (mount(2) needs
// CAP_SYS_ADMIN: check mounted() and GTEST_SKIP with error() when it failed).
// Unmounted (lazily) on destruction.
class TmpfsMount {
 public:
  explicit TmpfsMount(const std::string& dir, const std::string& size = "1m");
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  const std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // the signal that killed it, else 0
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv (argv[0] is the program path) with stdin from `input`, captures
// stdout and stderr. No shell is involved.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& input = "");

// Runs the momenta CLI built with this test binary.
CommandResult RunCli(const std::vector<std::string>& args, const std::string& input = "");

// True when /usr/bin/python3 can import numpy (CI installs python3-numpy).
bool HaveNumpy();
// Runs a Python snippet with /usr/bin/python3; returns its result.
CommandResult RunPython(const std::string& code);

// The lines of `text` without their "\n" (a last line without one counts).
std::vector<std::string> Lines(const std::string& text);

std::string ReadFileBytes(const std::string& path);
void WriteFileBytes(const std::string& path, const std::string& bytes);

// The seed to use for randomized tests: $MOMENTA_SEED when set, else a fresh
// one. Printed ("[ seed ] MOMENTA_SEED=..."), so any run reproduces; tests
// also name it in SCOPED_TRACE so a failure message carries it.
uint64_t TestSeed();

// Creates the 1-D f8 array `path` holding `values`, written and synced (a
// fixture's data before its buffer is built).
Status WriteF8Array(const std::string& path, std::span<const double> values);

}  // namespace momenta::testing
