#include "storage/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "storage/array_file.h"

namespace momenta {
namespace {
constexpr std::string_view kLockedByAnotherWriter = "locked by another writer";
}  // namespace

bool IsLockedByAnotherWriter(const Status& s) {
  return s.code() == Status::Code::kIOError &&
         s.ToString().find(kLockedByAnotherWriter) != std::string::npos;
}

namespace {

// The pid a holder wrote into the lock file, or 0.
long HolderPid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(text, &end, 10);
  return end != text && pid > 0 ? pid : 0;
}

}  // namespace

WriterLock::~WriterLock() {
  if (!fd_.valid()) return;
  // Best effort: a refused writer should not name a pid that no longer holds.
  if (::ftruncate(fd_.get(), 0) != 0) {}
  ::flock(fd_.get(), LOCK_UN);
}

Result<std::unique_ptr<WriterLock>> WriterLock::Acquire(const std::string& lock_path,
                                                        const std::string& subject) {
  auto fd = OpenFile(lock_path, O_RDWR | O_CREAT, 0644);
  if (!fd.ok()) return fd.status();
  int rc;
  do {
    rc = ::flock(fd->get(), LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno != EWOULDBLOCK) return Status::FromErrno(lock_path, errno);
    const long pid = HolderPid(fd->get());
    return Status::IOError(subject, std::string(kLockedByAnotherWriter) + " (pid " +
                                        (pid > 0 ? std::to_string(pid) : "unknown") + ")");
  }
  const std::string text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd->get(), 0) != 0) return Status::FromErrno(lock_path, errno);
  MOMENTA_RETURN_IF_ERROR(PwriteFully(fd->get(), lock_path, 0, text.size(), text.data()));
  return std::unique_ptr<WriterLock>(new WriterLock(lock_path, std::move(*fd)));
}

Result<std::unique_ptr<WriterLock>> LockArrayForWriting(const std::string& array_path) {
  const std::string sidecar = SidecarPath(array_path);
  if (::mkdir(sidecar.c_str(), 0755) != 0 && errno != EEXIST)
    return Status::FromErrno(sidecar, errno);
  return WriterLock::Acquire(sidecar + "/writer.lock", array_path);
}

}  // namespace momenta
