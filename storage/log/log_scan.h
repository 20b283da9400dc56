// SegmentScanner: one update-log segment read frame by frame, with the log's
// damage rule. A frame is valid (whole) when its header crc and fields check,
// it lies wholly inside the file, its payload crc checks, and its sequences
// are consecutive. Anything else is damage: the scan resumes at the next
// valid frame, found byte by byte, or stops at the end of the file. A valid
// frame whose sequences do not all lie beyond the last one read (a frame
// written twice, two frames swapped) is still a valid frame: the scan returns
// it with the count of its out-of-place records, and the caller reports and
// skips those (it never makes the frame damage, so never a torn tail). The
// outcome depends only on whole frames in the file, so an append (or the
// recovery's cut of a torn tail) never hides records a scan returned. Used by
// LogReader and RecoverLog; not for callers above storage/.
// Not thread-safe; reads only (never changes the file).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/io/posix_file.h"
#include "storage/log/log_damage.h"
#include "storage/log/log_format.h"
#include "storage/util/status.h"

namespace momenta {

class SegmentScanner {
 public:
  SegmentScanner(const SegmentScanner&) = delete;
  SegmentScanner& operator=(const SegmentScanner&) = delete;

  // Opens `path` read-only and checks its header against `name_sequence` (the
  // first sequence its file name gives). NotFound when the file is gone; other
  // OS failures are IO errors. A bad header is not an error here: see
  // header_status().
  static Result<std::unique_ptr<SegmentScanner>> Open(const std::string& path, uint64_t name_sequence);

  const std::string& path() const { return path_; }
  // OK, or why the header is unusable: Corruption (short, foreign, damaged,
  // or disagreeing with the file name) or NotSupported (newer format version).
  const Status& header_status() const { return header_status_; }
  // REQUIRES: header_status().ok()
  const LogSegmentHeader& header() const { return header_; }

  uint64_t offset() const { return offset_; }  // the next byte Next() looks at
  uint64_t size() const { return size_; }      // file size as of Open or Refresh
  // Re-reads the file size (a writer may have appended or cut) and forgets
  // the bytes read so far.
  [[nodiscard]] Status Refresh();
  // REQUIRES: offset <= size()
  void Seek(uint64_t offset);

  struct Step {
    enum Kind { kEnd, kFrame, kDamage } kind = kEnd;
    uint64_t begin = 0, end = 0;  // bytes [begin, end) of the frame or the damage
    uint32_t claimed = 0;         // kDamage: records the first bad frame's header claims (0: unknown)
    // kFrame: how many of the frame's first records have a sequence at or
    // below `after` (out of place: duplicates, or behind a later frame).
    uint32_t stale = 0;
    std::string problem;  // kDamage: why that frame was refused, a few words
  };
  // Looks at offset(). kEnd: offset() == size(). kFrame: the frame's records
  // replace *records and offset() moves past it; Step::stale counts its
  // records at or below `after` (the last sequence read), which the caller
  // skips. kDamage: offset() moves to the next valid frame, or to size()
  // (then the damage is the file's tail).
  [[nodiscard]] Result<Step> Next(uint64_t after, std::vector<LogRecord>* records);

  // The sequence of the last record of the segment's last frame when the
  // file ends with a valid frame, found by looking back from the end (reads
  // at most the last frame's bytes, plus read-ahead); the first sequence - 1
  // for a segment of header only; nullopt when the end is no valid frame
  // (scan the segment to see what is there). Cheap: for checking segments the
  // writer finished. In a damaged segment the last frame may be out of place
  // (a duplicate): a caller that finds it disagree with what it expects
  // scans the segment whole.
  // REQUIRES: header_status().ok()
  [[nodiscard]] Result<std::optional<uint64_t>> LastSequenceAtEnd();

  // The `after` for Next: the last valid sequence read so far (if any), but
  // never below the segment's first sequence - 1 (from its name).
  uint64_t After(const std::optional<uint64_t>& last_sequence) const;
  // A kDamage step as a report: a torn tail when it reaches size(), else
  // corrupt frames; records_lost from the damaged header, when it checked.
  LogDamage DamageOf(const Step& step) const;
  // A kFrame step's out-of-place records (step.stale > 0) as a report:
  // sequences, offset, and `after`, the last sequence read before them.
  LogDamage OutOfPlaceOf(const Step& step, const std::vector<LogRecord>& records, uint64_t after) const;
  // The unusable header as a report (kBadSegment over the whole file).
  // REQUIRES: !header_status().ok()
  LogDamage HeaderDamage() const;

 private:
  SegmentScanner(std::string path, uint64_t name_sequence, FileDescriptor fd)
      : path_(std::move(path)), name_sequence_(name_sequence), fd_(std::move(fd)) {}
  // Up to `length` bytes at `offset`, fewer at end of file; valid until the next call.
  [[nodiscard]] Result<std::string_view> View(uint64_t offset, size_t length);
  // Checks the frame at `at`; "" and *records filled when valid, else the problem.
  [[nodiscard]] Result<std::string> TryFrame(uint64_t at, std::vector<LogRecord>* records, uint32_t* claimed,
                                             uint64_t* end);

  const std::string path_;
  const uint64_t name_sequence_;  // the first sequence the file name gives
  FileDescriptor fd_;
  Status header_status_;
  LogSegmentHeader header_{};
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
  std::string buffer_;  // file bytes [buffer_offset_, buffer_offset_ + buffer_.size())
  uint64_t buffer_offset_ = 0;
};

}  // namespace momenta
