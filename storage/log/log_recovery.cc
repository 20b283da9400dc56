#include "storage/log/log_recovery.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "storage/io/posix_file.h"
#include "storage/log/log_codec.h"
#include "storage/log/log_scan.h"
#include "storage/log/log_segments.h"

namespace momenta {

namespace {

// Truncates `path` to `size` and makes the cut durable.
Status CutSegment(const std::string& path, uint64_t size) {
  auto fd = OpenFile(path, O_WRONLY);
  if (!fd.ok()) return fd.status();
  if (::ftruncate(fd->get(), static_cast<off_t>(size)) != 0) return Status::FromErrno(path, errno);
  return SyncData(fd->get(), path);
}

LogDamage Gap(const std::string& segment, uint64_t offset, uint64_t first_lost, uint64_t last_lost) {
  LogDamage d;
  d.kind = LogDamage::Kind::kMissingRecords;
  d.segment = segment;
  d.offset = offset;
  d.problem = "sequence gap";
  d.records_lost = last_lost - first_lost + 1;
  d.first_lost = first_lost;
  return d;
}

// One segment read whole: its last valid record, and its damage with each
// loss settled against the valid frame after it.
struct WholeScan {
  std::optional<uint64_t> last;  // the last valid record's sequence
  bool frames = false;           // a whole frame was met (in place or not)
  uint64_t last_end = 0;         // the end of the last valid frame (or of the header)
  std::vector<LogDamage> damage;
  std::optional<size_t> unsettled;  // damage[*unsettled]: not yet followed by a valid frame
  // The sequence the next valid record should have.
  uint64_t expected(uint64_t first_sequence) const { return last ? *last + 1 : first_sequence; }
  // Books a loss [expected, next_first) on the unsettled damage, else as a gap.
  void Settle(uint64_t expected, uint64_t next_first, const std::string& segment, uint64_t offset) {
    if (unsettled) {
      damage[*unsettled].records_lost = next_first > expected ? next_first - expected : 0;
      damage[*unsettled].first_lost = expected;
      unsettled.reset();
    } else if (next_first > expected) {
      damage.push_back(Gap(segment, offset, expected, next_first - 1));
    }
  }
};

Status ScanWhole(SegmentScanner& s, uint64_t first_sequence, WholeScan* out) {
  std::vector<LogRecord> records;
  out->last_end = s.offset();
  for (;;) {
    const uint64_t after = s.After(out->last);
    auto step = s.Next(after, &records);
    if (!step.ok()) return step.status();
    if (step->kind == SegmentScanner::Step::kEnd) return Status::OK();
    if (step->kind == SegmentScanner::Step::kDamage) {
      out->damage.push_back(s.DamageOf(*step));
      if (!out->unsettled) out->unsettled = out->damage.size() - 1;
      continue;
    }
    // A whole frame: no byte before its end is a torn tail, whatever its
    // sequences. Its out-of-place records are reported and stay in the file.
    out->frames = true;
    out->last_end = step->end;
    if (step->stale > 0) out->damage.push_back(s.OutOfPlaceOf(*step, records, after));
    if (step->stale == records.size()) continue;
    out->Settle(out->expected(first_sequence), records[step->stale].sequence, s.path(), step->begin);
    out->last = records.back().sequence;
  }
}

// An older segment (finished when the writer moved on): its header, and its
// last record against `next_first`, the first sequence of the segment after it.
// *last (when the segment's end is a valid frame, or it was scanned) gets the
// sequence of its last record: in a damaged folder it may lie at or beyond
// the next segments' (a segment restored or copied in), and readers return it.
Status CheckOlderSegment(const LogSegmentFile& seg, const LogSegmentFile& next, std::vector<LogDamage>* out,
                         std::optional<uint64_t>* last_record) {
  auto opened = SegmentScanner::Open(seg.path, seg.first_sequence);
  if (!opened.ok()) {
    if (opened.status().code() == Status::Code::kNotFound) return Status::OK();
    return opened.status();
  }
  SegmentScanner& s = **opened;
  const Status& header = s.header_status();
  if (header.code() == Status::Code::kNotSupported) return header;
  if (!header.ok()) {
    LogDamage d = s.HeaderDamage();
    if (next.first_sequence > seg.first_sequence) {
      d.records_lost = next.first_sequence - seg.first_sequence;
      d.first_lost = seg.first_sequence;
    }
    out->push_back(std::move(d));
    return Status::OK();
  }
  auto last = s.LastSequenceAtEnd();
  if (!last.ok()) return last.status();
  // An end that disagrees with the next segment (a gap, an overlap, or a
  // last frame out of place) is looked at whole.
  if (*last && **last + 1 == next.first_sequence) {
    *last_record = **last;
    return Status::OK();
  }
  WholeScan scan;
  MOMENTA_RETURN_IF_ERROR(ScanWhole(s, seg.first_sequence, &scan));
  *last_record = scan.last;
  scan.Settle(scan.expected(seg.first_sequence), next.first_sequence, next.path, sizeof(LogSegmentHeader));
  out->insert(out->end(), scan.damage.begin(), scan.damage.end());
  return Status::OK();
}

// The high-water mark into r.mark, or a kBadMark report when it is unreadable.
Status ReadMarkInto(const std::string& log_dir, LogRecovery* r) {
  auto mark = ReadLogMark(log_dir);
  if (mark.ok()) {
    r->mark = *mark;
  } else if (mark.status().code() == Status::Code::kCorruption) {
    r->mark_unreadable = true;
    LogDamage d;
    d.kind = LogDamage::Kind::kBadMark;
    d.segment = LogMarkPath(log_dir);
    const std::string text = mark.status().ToString();
    d.problem = text.substr(text.find(d.segment + ": ") + d.segment.size() + 2);
    r->damage.push_back(std::move(d));
  } else {
    return mark.status();
  }
  return Status::OK();
}

// What step 1 of RecoverLog found: the newest segment that holds anything.
struct NewestSegment {
  std::optional<size_t> index;     // into the listing; none: no segment holds a valid record or header
  uint64_t next_in_log = 0;        // after the log's last valid record; 0: no segment
  std::vector<LogDamage> damage;   // in the newest segment
  std::vector<LogDamage> removed;  // newer segments removed (nothing valid in them)
};

// The mark's `logged` (0 without a mark); the caller's minimum - 1 (0 without one).
uint64_t MarkLogged(const LogRecovery& r) { return r.mark ? r.mark->logged : 0; }
uint64_t CallerNeeds(const LogRecoveryOptions& options) {
  return options.min_next_sequence > 0 ? options.min_next_sequence - 1 : 0;
}
// The larger of the two: the highest sequence known to have been handed out.
uint64_t KnownHandedOut(const LogRecovery& r, const LogRecoveryOptions& options) {
  return std::max(MarkLogged(r), CallerNeeds(options));
}

// Step 1: the newest segment, scanned whole and cut after its last valid
// frame; newer segments with nothing valid (a crash while one was created)
// are removed. Fills r's active segment, dtype and tag.
Status RecoverNewest(const std::string& log_dir, const std::vector<LogSegmentFile>& segments,
                     const LogRecoveryOptions& options, LogRecovery* r, NewestSegment* out) {
  for (size_t i = segments.size(); i-- > 0;) {
    const LogSegmentFile& seg = segments[i];
    auto opened = SegmentScanner::Open(seg.path, seg.first_sequence);
    if (!opened.ok()) {
      if (opened.status().code() == Status::Code::kNotFound) continue;
      return opened.status();
    }
    SegmentScanner& s = **opened;
    const Status& header = s.header_status();
    if (header.code() == Status::Code::kNotSupported) return header;
    WholeScan scan;
    MOMENTA_RETURN_IF_ERROR(ScanWhole(s, seg.first_sequence, &scan));

    if (!header.ok()) {
      LogDamage d = s.HeaderDamage();
      if (!scan.frames && !options.cut) {
        out->removed.insert(out->removed.begin(), std::move(d));  // reported, left in place
        continue;
      }
      if (!scan.frames) {
        // Nothing valid in the newest segment: a crash while it was created.
        if (::unlink(seg.path.c_str()) != 0) return Status::FromErrno(seg.path, errno);
        MOMENTA_RETURN_IF_ERROR(SyncDirectory(log_dir));
        d.cut = true;
        r->bytes_cut += d.bytes;
        out->removed.insert(out->removed.begin(), std::move(d));
        continue;
      }
      // Valid frames behind a bad header: keep them for readers' sake, and
      // append to a new segment, named above this one (its frames may all be
      // out of place: then its own first sequence goes unused).
      out->index = i;
      out->damage.push_back(std::move(d));
      out->damage.insert(out->damage.end(), scan.damage.begin(), scan.damage.end());
      out->next_in_log = std::max(scan.last.value_or(0) + 1, seg.first_sequence + 1);
      return Status::OK();
    }
    const bool torn = !scan.damage.empty() && scan.damage.back().kind == LogDamage::Kind::kTornTail;
    if (torn && options.cut) {
      MOMENTA_RETURN_IF_ERROR(CutSegment(seg.path, scan.last_end));
      scan.damage.back().cut = true;
      r->bytes_cut += scan.damage.back().bytes;
    }
    out->index = i;
    out->next_in_log = scan.expected(seg.first_sequence);
    // Appends go to a new segment when bytes were left that the next frame
    // must not land behind (recovery that cuts nothing).
    if (options.cut || (!torn && out->removed.empty())) r->active_segment = seg.path;
    r->active_end = scan.last_end;
    r->dtype = LogSegmentDType(s.header());
    r->array_tag = s.header().array_tag;
    // The end of the log, checked against the mark below: a torn tail there
    // carries that loss.
    if (scan.unsettled && scan.damage[*scan.unsettled].kind == LogDamage::Kind::kTornTail) {
      const uint64_t known = KnownHandedOut(*r, options);
      if (known >= out->next_in_log) scan.Settle(out->next_in_log, known + 1, seg.path, s.size());
    }
    out->damage.insert(out->damage.end(), scan.damage.begin(), scan.damage.end());
    return Status::OK();
  }
  return Status::OK();
}

// Step 3: the next sequence to hand out, above the log's last record, the
// mark's `logged`, the caller's minimum, every older segment's last record
// (`older_top`) and, after a machine restart, what the mark reserved; each
// loss this reveals that no report told yet is added to r->damage.
void SettleNextSequence(const std::string& log_dir, const std::vector<LogSegmentFile>& segments,
                        const LogRecoveryOptions& options, const NewestSegment& newest, uint64_t older_top,
                        LogRecovery* r) {
  const uint64_t base = newest.next_in_log > 0 ? newest.next_in_log : options.first_sequence;
  const uint64_t last = base - 1;
  r->last_sequence = newest.index ? newest.next_in_log - 1 : 0;
  const uint64_t logged = MarkLogged(*r), needed = CallerNeeds(options);
  uint64_t top = last;
  if (KnownHandedOut(*r, options) > last) {
    top = KnownHandedOut(*r, options);
    const std::vector<LogDamage>& nd = newest.damage;
    const bool told = !nd.empty() && nd.back().kind == LogDamage::Kind::kTornTail && nd.back().first_lost == last + 1 &&
                      nd.back().records_lost.value_or(0) == top - last;
    if (!told) {
      LogDamage d;
      d.kind = LogDamage::Kind::kMissingEnd;
      d.segment = newest.index ? segments[*newest.index].path : log_dir;
      d.offset = newest.index ? r->active_end : 0;
      d.problem = "the log ends at sequence " + std::to_string(last) + ", but " +
                  (logged >= needed
                       ? "the high-water mark says sequence " + std::to_string(logged) + " was logged"
                       : "sequence " + std::to_string(needed) + " is reflected by the log's user (its checkpoint)");
      d.records_lost = top - last;
      d.first_lost = last + 1;
      r->damage.push_back(std::move(d));
    }
  }
  // Segments that overlap (an older one running past a newer one's start:
  // readers skip the newer one's records up to it as damage) must not make
  // the writer hand out a sequence readers have seen.
  top = std::max(top, older_top);
  if (r->mark && !r->mark->same_boot() && r->mark->reserved > top) {
    LogDamage d;
    d.kind = LogDamage::Kind::kUnusedSequences;
    d.segment = LogMarkPath(log_dir);
    d.problem = "reserved by a writer before the machine restarted; records it had not synced are lost";
    d.records_lost = r->mark->reserved - top;
    d.first_lost = top + 1;
    r->damage.push_back(std::move(d));
    top = r->mark->reserved;
  }
  r->next_sequence = top + 1;
}

}  // namespace

Result<LogRecovery> RecoverLog(const std::string& log_dir, const LogRecoveryOptions& options) {
  auto segments = ListLogSegments(log_dir);
  if (!segments.ok()) return segments.status();
  LogRecovery r;
  MOMENTA_RETURN_IF_ERROR(ReadMarkInto(log_dir, &r));
  // 1. The newest segment, scanned whole and cut after its last valid frame.
  NewestSegment newest;
  MOMENTA_RETURN_IF_ERROR(RecoverNewest(log_dir, *segments, options, &r, &newest));
  // 2. Older segments, cheaply: each one's end against the next one's start.
  // The highest sequence an older segment ends with: never handed out again.
  uint64_t older_top = 0;
  if (newest.index) {
    for (size_t i = 0; i < *newest.index; ++i) {
      std::optional<uint64_t> last_record;
      MOMENTA_RETURN_IF_ERROR(CheckOlderSegment((*segments)[i], (*segments)[i + 1], &r.damage, &last_record));
      older_top = std::max(older_top, last_record.value_or(0));
    }
  }
  r.damage.insert(r.damage.end(), newest.damage.begin(), newest.damage.end());
  r.damage.insert(r.damage.end(), newest.removed.begin(), newest.removed.end());
  // 3. The end of the log against the mark and the caller's minimum.
  SettleNextSequence(log_dir, *segments, options, newest, older_top, &r);
  return r;
}

}  // namespace momenta
