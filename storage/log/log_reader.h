// Reading the update log: records in sequence order across segments, filtered
// by sequence and time, and following a live log. (The writer's recovery scan
// is in log_recovery.h.)
//
// Damage is reported, never fatal. Each frame is checked as a unit (crc of
// header and payload, consecutive sequences); a bad frame is skipped whole and
// reading resumes at the next valid frame, so a flipped byte in frame two of
// three yields frame one, one LogDamage, then frame three. A valid frame out
// of place (written twice, or swapped with a later one) is no damage to its
// neighbors: its records at or below the last sequence read are reported
// (kOutOfPlace: sequences and offset) and skipped (see
// LogReaderOptions::out_of_order), the frames after it read as usual. Errors
// (Status) are kept for the OS refusing a read and for a segment of a newer
// format.
//
// Readers take no lock and may run beside a writer in another process: they
// see every frame whose write completed before they reached it. A partial last
// frame of the newest segment is what a reader sees while a writer is
// mid-append; a plain reader reports it as a torn tail, a following reader
// waits for it. Segments the writer drops before a reader reaches them show up
// as one kMissingRecords gap. A LogReader is used by one thread at a time.
//
// Losses are reported with the sequences lost: a gap between frames or
// segments (a segment removed, or cut at a frame boundary: kMissingRecords),
// damaged bytes (settled against the next valid frame), and a log that ends
// below its high-water mark (log_mark.h, read at Open: the newest segment
// removed or cut; kMissingEnd, or settled on the torn tail). Readers open every
// file read-only and never change the log: cutting and removing is the
// writer's recovery's job (log_recovery.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/log/log_damage.h"
#include "storage/log/log_format.h"
#include "storage/log/log_segments.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

class SegmentScanner;

struct LogReaderOptions {
  uint64_t from_sequence = 0;                           // records below are skipped
  int64_t since = std::numeric_limits<int64_t>::min();  // time filter: since <= time < until
  int64_t until = std::numeric_limits<int64_t>::max();
  // Follow a live log: at the end, Next() returns false "for now" and a later
  // call picks up frames appended since, across rotation to new segments.
  bool follow = false;
  // Out-of-place records (a valid record whose sequence is at or below one
  // read before it) are always reported (LogDamage::kOutOfPlace, with their
  // sequences and offset) and never change the file. false: they are
  // skipped, so Next() returns strictly increasing sequences, each once (what
  // replay needs). true: one never returned before (it lies in a gap met
  // earlier: frames swapped) is returned too, in file order, so every valid
  // record is returned once (`momenta log`); duplicates are still skipped.
  bool out_of_order = false;
};

class LogReader {
 public:
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;
  ~LogReader();

  // Opens the log folder (e.g. LogDirPath(array)). NotFound when it does not
  // exist. Reads nothing yet.
  static Result<std::unique_ptr<LogReader>> Open(const std::string& log_dir, LogReaderOptions options = {});

  // The next record that passes the filters: true and *record set, or false at
  // the end of the log (follow: the end for now). Damage met on the way is
  // added to damage() and skipped.
  [[nodiscard]] Result<bool> Next(LogRecord* record);
  // Follow mode: waits up to `timeout` for the next record, polling every
  // `poll`; false when none came. REQUIRES: options.follow
  [[nodiscard]] Result<bool> NextWithin(LogRecord* record, std::chrono::milliseconds timeout,
                                        std::chrono::milliseconds poll = std::chrono::milliseconds(10));

  // The dtype of the segment that held the last record returned.
  // REQUIRES: Next() has returned true
  DType dtype() const;
  uint64_t array_tag() const;
  // Every damage met so far, in log order.
  const std::vector<LogDamage>& damage() const { return damage_; }

 private:
  LogReader(std::string dir, LogReaderOptions options);
  [[nodiscard]] Status List();
  // Opens segments_[next_segment_] (skipping removed ones); false if none left.
  [[nodiscard]] Result<bool> OpenNextSegment();
  // At the end of the current segment: true if reading should go on (more
  // bytes or a newer segment), false for "end of log (for now)".
  [[nodiscard]] Result<bool> AtSegmentEnd();
  void AddDamage(LogDamage d);
  // Books a valid frame's records above the last sequence read: settles the
  // loss of damage met since the last one, and remembers a gap.
  void AccountFrame(uint64_t first_sequence, uint64_t count, uint64_t offset);
  // The current frame's first report.records_skipped records (at or below
  // the last sequence read): reported, and dropped from frame_ unless
  // options_.out_of_order returns them (those never returned before).
  void TakeOutOfPlace(LogDamage report);
  // Whether `sequence` lies in a gap met so far (never returned); `take`:
  // it is returned now, so no longer in a gap.
  bool InGap(uint64_t sequence, bool take);
  // At the end of the log (for now), once: records below the mark that were
  // not met are lost.
  void CheckEnd();

  const std::string dir_;
  const LogReaderOptions options_;
  std::vector<LogSegmentFile> segments_;
  size_t next_segment_ = 0;                  // index into segments_ of the next to open
  std::optional<uint64_t> last_opened_;      // first sequence of the segment opened last
  std::unique_ptr<SegmentScanner> current_;  // null between segments
  bool current_final_ = false;               // a newer segment exists: current_ gets no more frames
  std::vector<LogRecord> frame_;             // the current frame's records
  size_t frame_pos_ = 0;                     // records of frame_ already looked at
  std::optional<uint64_t> last_sequence_;    // of the last valid frame read
  std::optional<uint64_t> expected_;         // the sequence the next valid frame should start at
  std::vector<size_t> unsettled_;            // damage_ met since the last valid frame
  // Sequence ranges [first, last] skipped over by the frames read so far
  // (sorted; the oldest dropped past kMaxGaps): out-of-place records in them
  // were never returned.
  static constexpr size_t kMaxGaps = 4096;
  std::vector<std::pair<uint64_t, uint64_t>> gaps_;
  std::vector<LogDamage> damage_;
  std::optional<uint64_t> mark_logged_;  // the high-water mark's `logged`, as read at Open
  bool end_checked_ = false;             // CheckEnd ran
  std::string last_path_;                // the segment opened last
  DType dtype_ = DType::kF8;
  uint64_t array_tag_ = 0;
};

}  // namespace momenta
