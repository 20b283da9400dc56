#include "storage/log/log_mark.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "storage/log/log_segments.h"
#include "storage/util/crc32c.h"

namespace momenta {

namespace {

constexpr size_t kSlotBytes = sizeof(LogMarkSlot);
constexpr size_t kFileBytes = 2 * kSlotBytes;

uint32_t SlotCrc(const LogMarkSlot& s) { return Crc32c(&s, offsetof(LogMarkSlot, crc)); }

LogMarkSlot EncodeSlot(const LogMark& m) {
  LogMarkSlot s;
  std::memset(&s, 0, sizeof s);
  std::memcpy(s.magic, kLogMarkMagic, sizeof s.magic);
  s.version = kLogMarkVersion;
  s.generation = m.generation;
  s.logged = m.logged;
  s.reserved = m.reserved;
  std::memcpy(s.boot, m.boot.data(), sizeof s.boot);
  s.crc = SlotCrc(s);
  return s;
}

// A slot that checks (a newer version counts as unreadable: the writer of a
// newer format will not meet this one's segments either).
std::optional<LogMark> DecodeSlot(const char* bytes) {
  LogMarkSlot s;
  std::memcpy(&s, bytes, sizeof s);
  if (std::memcmp(s.magic, kLogMarkMagic, sizeof s.magic) != 0 || s.crc != SlotCrc(s) || s.version != kLogMarkVersion ||
      s.generation == 0 || s.logged > s.reserved)
    return std::nullopt;
  LogMark m;
  m.generation = s.generation;
  m.logged = s.logged;
  m.reserved = s.reserved;
  std::memcpy(m.boot.data(), s.boot, sizeof s.boot);
  return m;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const BootId& CurrentLogBootId() {
  static const BootId id = [] {
    BootId out{};
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string text;
    std::getline(in, text);
    size_t n = 0;
    for (size_t i = 0; i + 1 < text.size() && n < out.size(); ++i) {
      const int hi = HexDigit(text[i]);
      if (hi < 0) continue;  // the dashes
      const int lo = HexDigit(text[i + 1]);
      if (lo < 0) return BootId{};
      out[n++] = static_cast<uint8_t>(hi * 16 + lo);
      ++i;
    }
    return n == out.size() ? out : BootId{};
  }();
  return id;
}

std::string LogMarkPath(const std::string& log_dir) { return log_dir + "/high-water"; }

Result<std::optional<LogMark>> ReadLogMark(const std::string& log_dir) {
  const std::string path = LogMarkPath(log_dir);
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) {
    if (fd.status().sys_errno() == ENOENT) return std::optional<LogMark>();
    return fd.status();
  }
  char bytes[kFileBytes] = {};
  size_t got = 0;
  while (got < kFileBytes) {
    const ssize_t r = ::pread(fd->get(), bytes + got, kFileBytes - got, static_cast<off_t>(got));
    if (r < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(path, errno);
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  std::optional<LogMark> best;
  for (size_t slot = 0; slot < 2; ++slot) {
    if (got < (slot + 1) * kSlotBytes) break;
    auto m = DecodeSlot(bytes + slot * kSlotBytes);
    if (m && (!best || m->generation > best->generation)) best = m;
  }
  if (!best)
    return Status::Corruption(path, "high-water mark unreadable (" + std::to_string(got) + " bytes, no slot checks)");
  return best;
}

Result<LogMarkFile> LogMarkFile::Open(const std::string& log_dir, const std::optional<LogMark>& current,
                                      uint64_t logged, uint64_t reserved, bool sync) {
  LogMarkFile f;
  f.path_ = LogMarkPath(log_dir);
  if (current) f.mark_ = *current;
  if (!current) {
    // Whole before it has a name: a crash leaves no half-made mark.
    LogMark first;
    first.generation = 1;
    first.logged = logged;
    first.reserved = reserved;
    first.boot = CurrentLogBootId();
    const LogMarkSlot slots[2] = {EncodeSlot(first), EncodeSlot(first)};
    auto fd = ReplaceFile(f.path_, f.path_ + ".tmp", std::string_view(reinterpret_cast<const char*>(slots), kFileBytes),
                          sync);
    if (!fd.ok()) return fd.status();
    f.mark_ = first;
    f.fd_ = std::move(*fd);
    return f;
  }
  auto fd = OpenFile(f.path_, O_RDWR);
  if (!fd.ok()) return fd.status();
  f.fd_ = std::move(*fd);
  // What a writer that crashed while creating the mark left.
  const std::string temp = f.path_ + ".tmp";
  if (::unlink(temp.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(temp, errno);
  return f;
}

Status LogMarkFile::Write(uint64_t logged, uint64_t reserved, bool sync) {
  LogMark next;
  next.generation = mark_.generation + 1;
  next.logged = logged;
  next.reserved = reserved;
  next.boot = CurrentLogBootId();
  const LogMarkSlot slot = EncodeSlot(next);
  const uint64_t offset = (next.generation % 2) * kSlotBytes;
  MOMENTA_RETURN_IF_ERROR(PwriteFully(fd_.get(), path_, offset, sizeof slot, reinterpret_cast<const char*>(&slot)));
  if (sync) MOMENTA_RETURN_IF_ERROR(SyncData(fd_.get(), path_));
  mark_ = next;
  return Status::OK();
}

}  // namespace momenta
