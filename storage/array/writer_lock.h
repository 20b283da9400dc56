// WriterLock: one writer at a time, across processes, for an array or a log.
//
// An exclusive open-file-description lock (fcntl F_OFD_SETLK, Linux >= 3.15)
// on a lock file, taken without waiting; the holder's pid is written into the
// file so that a refused writer can name it. The kernel drops the lock when the
// holder closes it or dies, so a crash leaves no stale lock (the pid left in the
// file is then ignored). OFD locks behave like flock(2) — owned by the open file
// description, conflicting between two opens even within one process — and,
// unlike flock, can be *tested* without being taken (F_OFD_GETLK): readers ask
// whether a writer is alive (WriterIsAlive) and take no lock, so a reader never
// makes a writer fail. (Boost.Interprocess file_lock is a classic fcntl lock,
// which a process loses when it closes *any* descriptor of the file and which
// never conflicts within one process.)
#pragma once

#include <memory>
#include <string>

#include "storage/io/posix_file.h"
#include "storage/util/status.h"

namespace momenta {

class WriterLock {
 public:
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  // Empties the pid and releases the lock.
  ~WriterLock();

  // Creates `lock_path` if needed and locks it. While another WriterLock holds
  // it (another process, or another object in this one) the result is
  // "IO error: <subject>: locked by another writer (pid N)", or "(pid
  // unknown)" when the holder has not written its pid yet.
  static Result<std::unique_ptr<WriterLock>> Acquire(const std::string& lock_path, const std::string& subject);

  const std::string& path() const { return path_; }

 private:
  WriterLock(std::string path, FileDescriptor fd) : path_(std::move(path)), fd_(std::move(fd)) {}

  const std::string path_;
  FileDescriptor fd_;  // holds the flock
};

// True when `s` is Acquire's "locked by another writer" refusal (a live
// writer holds the lock), as opposed to any other failure.
bool IsLockedByAnotherWriter(const Status& s);

// Whether some process holds the lock at `lock_path` right now (a missing lock
// file: no). Takes no lock and needs only read access; *pid receives the pid
// the holder wrote (0 when unknown). A holder that dies is seen gone at once.
bool WriterIsAlive(const std::string& lock_path, long* pid = nullptr);

// The array's writer lock, "<sidecar>/writer.lock" (the sidecar folder is
// created if missing); errors name the array path.
Result<std::unique_ptr<WriterLock>> LockArrayForWriting(const std::string& array_path, const std::string& sidecar);
Result<std::unique_ptr<WriterLock>> LockArrayForWriting(const std::string& array_path);

}  // namespace momenta
