#include "storage/array/writer_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "storage/array/array_file.h"
#include "storage/util/parse_number.h"

namespace momenta {
namespace {
constexpr std::string_view kLockedByAnotherWriter = "locked by another writer";
}  // namespace

bool IsLockedByAnotherWriter(const Status& s) {
  return s.code() == Status::Code::kIOError && s.ToString().find(kLockedByAnotherWriter) != std::string::npos;
}

namespace {

// The pid a holder wrote into the lock file, or 0.
long HolderPid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  // The holder writes "<pid>\n" (Acquire, below).
  const std::string_view written(text, static_cast<size_t>(n));
  long pid = 0;
  return ParseInteger(written.substr(0, written.find('\n')), &pid) && pid > 0 ? pid : 0;
}

// The whole file, for F_OFD_* (l_pid must be 0).
struct flock WholeFile(short type) {
  struct flock l = {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = 0;
  l.l_len = 0;
  return l;
}

}  // namespace

WriterLock::~WriterLock() {
  if (!fd_.valid()) return;
  // Best effort: a refused writer should not name a pid that no longer holds.
  if (::ftruncate(fd_.get(), 0) != 0) {}
  struct flock l = WholeFile(F_UNLCK);
  (void)::fcntl(fd_.get(), F_OFD_SETLK, &l);
}

bool WriterIsAlive(const std::string& lock_path, long* pid) {
  if (pid) *pid = 0;
  auto fd = OpenFile(lock_path, O_RDONLY);
  if (!fd.ok()) return false;  // no lock file: nobody ever wrote here
  struct flock l = WholeFile(F_WRLCK);
  if (::fcntl(fd->get(), F_OFD_GETLK, &l) != 0) return false;
  if (l.l_type == F_UNLCK) return false;
  if (pid) *pid = HolderPid(fd->get());
  return true;
}

Result<std::unique_ptr<WriterLock>> WriterLock::Acquire(const std::string& lock_path, const std::string& subject) {
  auto fd = OpenFile(lock_path, O_RDWR | O_CREAT, 0644);
  if (!fd.ok()) return fd.status();
  struct flock l = WholeFile(F_WRLCK);
  int rc;
  do {
    rc = ::fcntl(fd->get(), F_OFD_SETLK, &l);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno != EAGAIN && errno != EACCES) return Status::FromErrno(lock_path, errno);
    const long pid = HolderPid(fd->get());
    return Status::IOError(
        subject, std::string(kLockedByAnotherWriter) + " (pid " + (pid > 0 ? std::to_string(pid) : "unknown") + ")");
  }
  const std::string text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd->get(), 0) != 0) return Status::FromErrno(lock_path, errno);
  MOMENTA_RETURN_IF_ERROR(PwriteFully(fd->get(), lock_path, 0, text.size(), text.data()));
  return std::unique_ptr<WriterLock>(new WriterLock(lock_path, std::move(*fd)));
}

Result<std::unique_ptr<WriterLock>> LockArrayForWriting(const std::string& array_path, const std::string& sidecar) {
  if (::mkdir(sidecar.c_str(), 0755) != 0 && errno != EEXIST) return Status::FromErrno(sidecar, errno);
  return WriterLock::Acquire(sidecar + "/writer.lock", array_path);
}

Result<std::unique_ptr<WriterLock>> LockArrayForWriting(const std::string& array_path) {
  return LockArrayForWriting(array_path, SidecarPath(array_path));
}

}  // namespace momenta
