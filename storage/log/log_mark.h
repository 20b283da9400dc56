// The update log's high-water mark: "<log dir>/high-water", a 128-byte file
// outside the segments that remembers which sequence numbers were handed out,
// so that a lost segment is reported (not silently skipped) and its sequence
// numbers are never given again. storage/ON_DISK.md has the prose.
//
//   two slots of 64 bytes, at 0 and 64; the valid slot with the higher
//   generation is the mark (a torn write spoils only the slot being written)
//   0  8  magic "MOMHWM\0\0"
//   8  4  version 1
//   12 4  zero
//   16 8  generation: 1, 2, ... (slot = generation % 2)
//   24 8  logged: every sequence <= logged was in a record the log held
//         (synced, unless the policy is kNone) when the slot was written
//   32 8  reserved >= logged: sequences a writer may have handed out
//   40 16 boot id of the machine's boot that wrote the slot (Linux boot_id)
//   56 4  zero
//   60 4  crc32c of bytes [0, 60)
//
// Trade-off: the writer raises `reserved` (one 64-byte write, synced unless
// kNone) before an Append or Reserve that would hand out a sequence above it,
// ahead by 64Ki sequences or by as many as it has handed out so far, and
// raises `logged` after each sync of frames (at Commit, at rotation, at
// Close): one small extra write and sync per commit, and O(log n) per writer.
// After a machine crash up to that many unused sequences are skipped (and
// readers see them as a gap).
// In return, after a crash of the machine the next writer starts above
// `reserved` (records an unsynced writer handed out may have been read, then
// lost), and after a crash of the process (same boot: every written frame is
// still in the log) it goes on right after the last record, so the sequence
// stays dense. The file never grows, so updating it never needs a new block:
// it works on a full disk.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/io/posix_file.h"
#include "storage/util/status.h"

namespace momenta {

inline constexpr char kLogMarkMagic[8] = {'M', 'O', 'M', 'H', 'W', 'M', '\0', '\0'};
inline constexpr uint32_t kLogMarkVersion = 1;
inline constexpr uint64_t kLogMarkReserveAhead = uint64_t{1} << 16;  // sequences

struct LogMarkSlot {
  char magic[8];
  uint32_t version, zero1;
  uint64_t generation, logged, reserved;
  uint8_t boot[16];
  uint32_t zero2, crc;
};
static_assert(sizeof(LogMarkSlot) == 8 + 4 + 4 + 8 + 8 + 8 + 16 + 4 + 4);

using BootId = std::array<uint8_t, 16>;
// This boot's id (all zero when /proc does not tell).
const BootId& CurrentLogBootId();

struct LogMark {
  uint64_t generation = 0;
  uint64_t logged = 0;
  uint64_t reserved = 0;
  BootId boot{};
  bool same_boot() const { return boot == CurrentLogBootId() && boot != BootId{}; }
};

// "<log dir>/high-water"
std::string LogMarkPath(const std::string& log_dir);

// Reads the mark read-only. nullopt when the file does not exist (a log from
// before the mark, or a new one); Corruption naming the file when neither
// slot checks; IO errors.
Result<std::optional<LogMark>> ReadLogMark(const std::string& log_dir);

// The writer's handle on the mark. Not thread-safe.
class LogMarkFile {
 public:
  LogMarkFile() = default;
  LogMarkFile(LogMarkFile&&) = default;
  LogMarkFile& operator=(LogMarkFile&&) = default;

  // Opens the mark for writing. When `current` (the mark as read) is nullopt
  // (none, or unreadable) the file is created, or replaced, holding `logged`
  // and `reserved`: written whole under a temporary name and renamed into
  // place (synced when `sync`), so a crash leaves no half-made mark (the
  // temporary it may leave is removed by the next Open).
  // REQUIRES: logged <= reserved
  static Result<LogMarkFile> Open(const std::string& log_dir, const std::optional<LogMark>& current, uint64_t logged,
                                  uint64_t reserved, bool sync);

  const LogMark& mark() const { return mark_; }
  // Writes logged/reserved (this boot) to the next slot; synced when `sync`.
  // REQUIRES: logged <= reserved
  [[nodiscard]] Status Write(uint64_t logged, uint64_t reserved, bool sync);

 private:
  std::string path_;
  FileDescriptor fd_;
  LogMark mark_;
};

}  // namespace momenta
