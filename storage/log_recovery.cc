#include "storage/log_recovery.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "storage/log_codec.h"
#include "storage/log_scan.h"
#include "storage/log_segments.h"
#include "storage/posix_file.h"

namespace momenta {

namespace {

// Truncates `path` to `size` and makes the cut durable.
Status CutSegment(const std::string& path, uint64_t size) {
  auto fd = OpenFile(path, O_WRONLY);
  if (!fd.ok()) return fd.status();
  if (::ftruncate(fd->get(), static_cast<off_t>(size)) != 0) return Status::FromErrno(path, errno);
  return SyncData(fd->get(), path);
}

}  // namespace

Result<LogRecovery> RecoverLog(const std::string& log_dir) {
  auto segments = ListLogSegments(log_dir);
  if (!segments.ok()) return segments.status();
  LogRecovery r;
  std::vector<LogRecord> records;
  for (size_t i = segments->size(); i-- > 0;) {
    const LogSegmentFile& seg = (*segments)[i];
    auto opened = SegmentScanner::Open(seg.path, seg.first_sequence);
    if (!opened.ok()) {
      if (opened.status().code() == Status::Code::kNotFound) continue;
      return opened.status();
    }
    SegmentScanner& s = **opened;
    const Status& header = s.header_status();
    if (header.code() == Status::Code::kNotSupported) return header;

    // Every frame, remembering the last valid one and settling each damage's
    // loss against the next valid frame.
    std::optional<uint64_t> last;
    uint64_t last_end = s.offset();
    std::vector<LogDamage> found;
    std::optional<size_t> unsettled;
    for (;;) {
      auto step = s.Next(s.After(last), &records);
      if (!step.ok()) return step.status();
      if (step->kind == SegmentScanner::Step::kEnd) break;
      if (step->kind == SegmentScanner::Step::kDamage) {
        found.push_back(s.DamageOf(*step));
        if (!unsettled) unsettled = found.size() - 1;
        continue;
      }
      const uint64_t expected = last ? *last + 1 : seg.first_sequence;
      if (unsettled) {
        found[*unsettled].records_lost = records.front().sequence - expected;
        found[*unsettled].first_lost = expected;
        unsettled.reset();
      }
      last = records.back().sequence;
      last_end = step->end;
    }

    if (!header.ok()) {
      LogDamage d = s.HeaderDamage();
      if (!last) {
        // Nothing valid in the newest segment: a crash while it was created.
        if (::unlink(seg.path.c_str()) != 0) return Status::FromErrno(seg.path, errno);
        MOMENTA_RETURN_IF_ERROR(SyncDirectory(log_dir));
        d.cut = true;
        r.bytes_cut += d.bytes;
        r.damage.push_back(std::move(d));
        continue;
      }
      // Valid frames behind a bad header: keep them for readers' sake, and
      // append to a new segment.
      r.damage.push_back(std::move(d));
      r.damage.insert(r.damage.end(), found.begin(), found.end());
      r.next_sequence = std::max(last ? *last + 1 : 0, seg.first_sequence);
      return r;
    }

    if (!found.empty() && found.back().kind == LogDamage::Kind::kTornTail) {
      MOMENTA_RETURN_IF_ERROR(CutSegment(seg.path, last_end));
      found.back().cut = true;
      r.bytes_cut += found.back().bytes;
    }
    r.damage.insert(r.damage.end(), found.begin(), found.end());
    r.next_sequence = last ? *last + 1 : seg.first_sequence;
    r.active_segment = seg.path;
    r.active_end = last_end;
    r.dtype = LogSegmentDType(s.header());
    r.array_tag = s.header().array_tag;
    return r;
  }
  return r;
}

}  // namespace momenta
