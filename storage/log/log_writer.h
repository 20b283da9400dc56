// LogWriter: appends update records to the log folder, one frame per Append.
//
// Open() takes the log's writer lock ("<log dir>/writer.lock", see
// writer_lock.h), runs RecoverLog (a torn tail is cut; every loss found is
// reported in recovery()), and continues the sequence after the last valid
// record, above the high-water mark (log_mark.h) and at least at
// min_next_sequence: a sequence number given to a record that a reader may
// have seen is never given again.
// Segments rotate when the next frame would take the newest one past
// segment_bytes (a segment always takes at least one frame); a new segment is
// written under "<name>.tmp" and renamed into place, so readers never meet a
// segment without its header. Not thread-safe: one thread appends.
//
// Durability, by sync policy ("durable" = on stable storage, given a device
// that honors cache flushes):
//   kAlways  Append returns after fdatasync of the frame (and, when it started a
//            segment, fsync of the folder): a returned record survives a crash
//            of the process and of the machine (power loss, kernel panic).
//   kBatch   Append returns once the frame is handed to the kernel: a returned
//            record survives a crash of the process (SIGKILL, abort), not
//            necessarily of the machine. Commit() makes every record appended
//            before it durable as kAlways does; after a machine crash the log
//            holds every record of every OK Commit, and of later records what
//            the OS had written back (a torn or damaged part is detected and
//            cut or skipped by the reader, never returned). The default; the
//            caller commits once per batch (at least once per CLI call).
//   kNone    As kBatch, but Commit() syncs nothing (it updates the high-water
//            mark in the page cache): the OS writes back when it chooses (about
//            30 s on Linux by default). A machine crash may lose any records
//            not yet written back, and may let their sequence numbers be
//            given again.
// Under every policy a crash leaves a log that opens: at worst a torn last
// frame, cut by the next Open. A frame is all-or-nothing for readers.
//
// Disk full: each Append first reserves the blocks its frame needs
// (fallocate, a little ahead), so ENOSPC fails the Append with
// "IO error: <segment>: No space left on device" before any byte is written;
// a write that fails part-way is truncated away. Either way the log is
// unchanged, no sequence number is used, and the next Append may succeed.
// A caller that must not fail half-way (all of a batch or none) calls
// Reserve() for the whole batch first.
//
// High-water mark (log_mark.h): `reserved` is raised, synced unless kNone,
// before an Append or Reserve hands out a sequence above it (ahead by 64Ki
// sequences, or by as many as this writer has handed out: O(log n) writes),
// and `logged` after frames are synced: at Commit, at rotation, at Close.
// A failed sync (or a failed clean-up) stops the writer: every later call
// returns that error, and the records of the failed call may or may not be
// in the log after a crash (the writer tries to cut them); reopen to go on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "storage/array/writer_lock.h"
#include "storage/io/posix_file.h"
#include "storage/log/log_format.h"
#include "storage/log/log_mark.h"
#include "storage/log/log_recovery.h"
#include "storage/log/log_sync.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

// The file operations of the writer, named for the fault-injection seam.
enum class LogFileOp { kCreate, kReserve, kWrite, kSync };

struct LogWriterOptions {
  DType dtype = DType::kF8;  // of the array; must match an existing log's
  uint64_t array_tag = 0;    // the caller's identity of the array: stored in new segment
                             // headers for readers, not checked against old ones
  LogSync sync = LogSync::kBatch;
  uint64_t segment_bytes = uint64_t{64} << 20;  // rotate past this size
  uint64_t first_sequence = 1;                  // the first sequence of an empty log (>= 1)
  // 0: none. The writer never hands out a sequence below it, and a log that
  // ends below min_next_sequence - 1 is reported as having lost
  // [last + 1, min_next_sequence - 1] (e.g. the last sequence a checkpoint
  // reflects, plus one).
  uint64_t min_next_sequence = 0;
  // false: Open changes no file of the log but the high-water mark (no torn
  // tail cut, no segment removed: LogRecoveryOptions::cut); appends go to a
  // new segment. For the recovery a read-only opener (a query) runs.
  bool cut_torn_tail = true;
  // Test seam: called before each file operation; a non-OK result is returned
  // as that operation's error, as if the OS had refused it.
  std::function<Status(LogFileOp op, const std::string& path)> fault;
};

class LogWriter {
 public:
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;
  // Releases unused reserved blocks and the lock; syncs nothing (Close does).
  ~LogWriter();

  // Creates the folder if needed (and its parent), locks it, recovers it.
  // Errors: the lock ("IO error: <dir>: locked by another writer (pid N)"), a
  // log of another dtype (Invalid argument), IO errors, newer format.
  static Result<std::unique_ptr<LogWriter>> Open(const std::string& log_dir, LogWriterOptions options);

  // What Open's recovery found and cut.
  const LogRecovery& recovery() const { return recovery_; }
  // The sequence the next appended record gets.
  uint64_t next_sequence() const { return next_sequence_; }
  const std::string& dir() const { return dir_; }

  // Appends `records` as one frame (several of kMaxFrameRecords each if
  // larger, written with one write; a crash may keep a prefix of them). Each
  // gets the next sequence number (their `sequence` field is ignored); a time
  // of kLogTimeNow becomes the wall clock in ms. Returns the first sequence
  // given: the records hold [first, first + records.size()). Durable per the
  // sync policy. An empty span appends nothing and returns next_sequence().
  [[nodiscard]] Result<uint64_t> Append(std::span<const LogRecord> records);

  // Makes room for the next `records` records, appended by at most `appends`
  // calls of Append: rotates now if they would not fit in the newest segment
  // (they then all go to one segment, which may grow past segment_bytes),
  // allocates their blocks and their sequence numbers. A full disk fails here
  // with "IO error: <segment>: No space left on device" and nothing in the
  // log changes (an empty new segment may stay); after an OK Reserve those
  // Appends cannot fail for want of space (an I/O error still can). The
  // reservation ends at the next Reserve or Commit.
  [[nodiscard]] Status Reserve(uint64_t records, uint64_t appends);

  // kBatch: fdatasync of what was appended since the last Commit (and fsync
  // of the folder after a new segment). Under every policy, then raises the
  // high-water mark's `logged` to the last record (synced unless kNone).
  [[nodiscard]] Status Commit();

  // Removes whole segments holding only records < sequence (never the newest
  // segment). Returns how many were removed. The caller picks `sequence` from
  // its checkpoint and retention. Readers that have a removed segment open
  // finish reading it.
  [[nodiscard]] Result<size_t> DropSegmentsBefore(uint64_t sequence);

  // Commit, release unused reserved blocks, close, unlock. Later calls fail.
  [[nodiscard]] Status Close();

 private:
  LogWriter(std::string dir, LogWriterOptions options, std::unique_ptr<WriterLock> lock);
  [[nodiscard]] Status Fault(LogFileOp op, const std::string& path) const;
  [[nodiscard]] Status StartSegment();                 // creates the segment named next_sequence_
  [[nodiscard]] Status FinishSegment();                // syncs per policy, trims, closes
  [[nodiscard]] Status ReserveBlocks(uint64_t bytes);  // blocks for [end_, end_ + bytes)
  // The mark's `reserved` raised to cover sequences up to `last`.
  [[nodiscard]] Status ReserveSequences(uint64_t last);
  // The mark's `logged` raised to the last record appended (call after a sync).
  [[nodiscard]] Status MarkLogged();
  [[nodiscard]] Status SyncNow();
  void TrimReservation();

  const std::string dir_;
  const LogWriterOptions options_;
  std::unique_ptr<WriterLock> lock_;
  LogRecovery recovery_;
  uint64_t next_sequence_ = 1;
  uint64_t opened_at_ = 1;     // next_sequence_ when Open returned
  std::string segment_;        // path of the segment appended to ("" before the first)
  FileDescriptor fd_;          // open on segment_
  uint64_t end_ = 0;           // bytes [0, end_) of segment_ hold its header and whole frames
  uint64_t synced_end_ = 0;    // bytes [0, synced_end_) of segment_ survived the last sync
  uint64_t reserved_end_ = 0;  // blocks of [0, reserved_end_) are allocated
  bool dir_unsynced_ = false;  // a segment was created since the folder's last fsync
  LogMarkFile mark_;           // the high-water mark
  uint64_t unit_left_ = 0;     // records of the last Reserve still to come: no rotation
  Status stopped_;             // not OK: the writer stopped after this error
  std::string frame_;          // encoding buffer, reused
};

}  // namespace momenta
