// FuzzScratchDir(tag): a fresh folder for a fuzz target's files, made once
// per process and removed with its contents when the process exits normally
// (libFuzzer's end of run, the replay binary's return; a crash leaves it).
// On tmpfs when /dev/shm is there (a target that writes files per input
// should not wear a disk), else under $TMPDIR, else /tmp:
// "<base>/momenta-fuzz-<tag>-XXXXXX". Aborts when no folder can be made: a
// target cannot run without one.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace momenta::fuzz {

inline std::string FuzzScratchBase() {
  if (::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

inline std::string& FuzzScratchPathSlot() {
  static std::string path;
  return path;
}

inline void RemoveFuzzScratch() {
  std::error_code ec;
  if (!FuzzScratchPathSlot().empty()) std::filesystem::remove_all(FuzzScratchPathSlot(), ec);
}

// REQUIRES: called once per process (the folder is removed at exit).
inline std::string FuzzScratchDir(const std::string& tag) {
  std::string pattern = FuzzScratchBase() + "/momenta-fuzz-" + tag + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror(pattern.c_str());
    std::abort();
  }
  FuzzScratchPathSlot() = pattern;
  std::atexit(RemoveFuzzScratch);
  return pattern;
}

}  // namespace momenta::fuzz
