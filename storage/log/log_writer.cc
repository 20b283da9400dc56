#include "storage/log/log_writer.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <vector>

#include "storage/log/log_codec.h"
#include "storage/log/log_segments.h"

namespace momenta {

namespace {

constexpr uint64_t kReserveAhead = 1 << 20;       // blocks reserved past the frame being written
constexpr std::string_view kTempSuffix = ".tmp";  // a segment not yet published

// rename(2) that refuses to replace an existing `to`.
Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return Status::OK();
  if (errno != EINVAL && errno != ENOSYS) return Status::FromErrno(to, errno);
  // A file system without RENAME_NOREPLACE: link refuses to replace too.
  if (::link(from.c_str(), to.c_str()) != 0) return Status::FromErrno(to, errno);
  if (::unlink(from.c_str()) != 0) return Status::FromErrno(from, errno);
  return Status::OK();
}

// Removes the unpublished segments a crashed writer left.
Status RemoveTempSegments(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(kTempSuffix) &&
        ParseLogSegmentName(std::string_view(name).substr(0, name.size() - kTempSuffix.size()))) {
      if (::unlink(entry.path().c_str()) != 0 && errno != ENOENT)
        return Status::FromErrno(entry.path().string(), errno);
    }
  }
  if (ec) return Status::FromErrno(dir, ec.value());
  return Status::OK();
}

// mkdir -p, syncing each parent that gained an entry.
Status MakeDirs(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return Status::OK();
  const std::filesystem::path parent = dir.parent_path();
  if (!parent.empty() && parent != dir) MOMENTA_RETURN_IF_ERROR(MakeDirs(parent));
  if (::mkdir(dir.c_str(), 0755) != 0) {
    if (errno == EEXIST) return Status::OK();
    return Status::FromErrno(dir.string(), errno);
  }
  return SyncDirectory(parent.empty() ? "." : parent.string());
}

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

LogWriter::LogWriter(std::string dir, LogWriterOptions options, std::unique_ptr<WriterLock> lock)
    : dir_(std::move(dir)), options_(std::move(options)), lock_(std::move(lock)) {}

LogWriter::~LogWriter() { TrimReservation(); }

Result<std::unique_ptr<LogWriter>> LogWriter::Open(const std::string& log_dir, LogWriterOptions options) {
  if (options.first_sequence == 0)
    return Status::InvalidArgument(log_dir, "the first sequence number must be at least 1");
  if (options.segment_bytes == 0) return Status::InvalidArgument(log_dir, "the segment size must be positive");
  MOMENTA_RETURN_IF_ERROR(MakeDirs(log_dir));
  auto lock = WriterLock::Acquire(log_dir + "/writer.lock", log_dir);
  if (!lock.ok()) return lock.status();
  if (options.cut_torn_tail) MOMENTA_RETURN_IF_ERROR(RemoveTempSegments(log_dir));
  LogRecoveryOptions ro;
  ro.cut = options.cut_torn_tail;
  ro.first_sequence = options.first_sequence;
  ro.min_next_sequence = options.min_next_sequence;
  auto recovery = RecoverLog(log_dir, ro);
  if (!recovery.ok()) return recovery.status();
  if (recovery->dtype && *recovery->dtype != options.dtype)
    return Status::InvalidArgument(log_dir, "the log holds dtype " + std::string(DTypeName(*recovery->dtype)) +
                                                ", not " + std::string(DTypeName(options.dtype)));

  std::unique_ptr<LogWriter> w(new LogWriter(log_dir, std::move(options), std::move(*lock)));
  w->recovery_ = std::move(*recovery);
  w->next_sequence_ = w->opened_at_ = w->recovery_.next_sequence;
  // A log without a readable mark gets one; the sequences it reserves start
  // at the next record.
  const uint64_t logged = w->recovery_.mark ? w->recovery_.mark->logged : 0;
  auto mark = LogMarkFile::Open(log_dir, w->recovery_.mark, logged, std::max(logged, w->next_sequence_ - 1),
                                w->options_.sync != LogSync::kNone);
  if (!mark.ok()) return mark.status();
  w->mark_ = std::move(*mark);
  if (!w->recovery_.active_segment.empty()) {
    auto fd = OpenFile(w->recovery_.active_segment, O_RDWR);
    if (!fd.ok()) return fd.status();
    w->fd_ = std::move(*fd);
    w->segment_ = w->recovery_.active_segment;
    w->end_ = w->reserved_end_ = w->recovery_.active_end;
    // An earlier writer may not have synced the segment or its folder entry
    // (kNone, or a crash before Commit): the next sync covers both.
    w->synced_end_ = 0;
    w->dir_unsynced_ = true;
  }
  return w;
}

Status LogWriter::Fault(LogFileOp op, const std::string& path) const {
  return options_.fault ? options_.fault(op, path) : Status::OK();
}

Status LogWriter::StartSegment() {
  // Written under a temporary name and published by rename, so that a reader
  // never meets a segment without its header.
  const std::string path = dir_ + "/" + LogSegmentName(next_sequence_);
  const std::string temp = path + std::string(kTempSuffix);
  MOMENTA_RETURN_IF_ERROR(Fault(LogFileOp::kCreate, path));
  auto fd = OpenFile(temp, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!fd.ok()) return fd.status();
  const LogSegmentHeader h = MakeLogSegmentHeader(next_sequence_, options_.dtype, options_.array_tag);
  Status s = Fault(LogFileOp::kReserve, path);
  if (s.ok()) s = AllocateRange(fd->get(), path, 0, sizeof h);
  if (s.ok()) s = Fault(LogFileOp::kWrite, path);
  if (s.ok()) s = PwriteFully(fd->get(), path, 0, sizeof h, reinterpret_cast<const char*>(&h));
  if (s.ok()) s = RenameNoReplace(temp, path);
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  segment_ = path;
  fd_ = std::move(*fd);
  end_ = reserved_end_ = sizeof h;
  synced_end_ = 0;
  dir_unsynced_ = true;
  return Status::OK();
}

Status LogWriter::FinishSegment() {
  if (options_.sync != LogSync::kNone && (synced_end_ < end_ || dir_unsynced_)) MOMENTA_RETURN_IF_ERROR(SyncNow());
  MOMENTA_RETURN_IF_ERROR(MarkLogged());
  TrimReservation();
  fd_ = FileDescriptor();
  segment_.clear();
  return Status::OK();
}

Status LogWriter::ReserveSequences(uint64_t last) {
  if (last <= mark_.mark().reserved) return Status::OK();
  // Ahead by 64Ki, or by as many as this writer has handed out so far: a
  // long-running writer rewrites the mark O(log n) times.
  const uint64_t ahead = std::max(kLogMarkReserveAhead, last - opened_at_ + 1);
  return mark_.Write(mark_.mark().logged, last + ahead, options_.sync != LogSync::kNone);
}

Status LogWriter::MarkLogged() {
  const uint64_t last = next_sequence_ - 1;
  const LogMark& m = mark_.mark();
  if (last <= m.logged) return Status::OK();
  return mark_.Write(last, std::max(m.reserved, last), options_.sync != LogSync::kNone);
}

Status LogWriter::Reserve(uint64_t records, uint64_t appends) {
  if (!stopped_.ok()) return stopped_;
  if (records == 0) return Status::OK();
  // Each Append is at least one frame, and one more per kMaxFrameRecords.
  const uint64_t frames = std::min(appends, records) + records / kMaxFrameRecords;
  const uint64_t bytes = records * sizeof(LogRecord) + frames * sizeof(LogFrameHeader);
  if (!segment_.empty() && end_ > sizeof(LogSegmentHeader) && end_ + bytes > options_.segment_bytes) {
    if (Status s = FinishSegment(); !s.ok()) return stopped_ = s;
  }
  if (segment_.empty()) MOMENTA_RETURN_IF_ERROR(StartSegment());
  MOMENTA_RETURN_IF_ERROR(ReserveBlocks(bytes));
  MOMENTA_RETURN_IF_ERROR(ReserveSequences(next_sequence_ + records - 1));
  unit_left_ = records;
  return Status::OK();
}

Status LogWriter::ReserveBlocks(uint64_t bytes) {
  const uint64_t need = end_ + bytes;
  if (need <= reserved_end_) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(Fault(LogFileOp::kReserve, segment_));
  // A little ahead, so that most appends need no fallocate; only the frame
  // itself when the file system has no room for more.
  const uint64_t ahead = std::max(need, std::min(need + kReserveAhead, options_.segment_bytes));
  Status s = AllocateRange(fd_.get(), segment_, reserved_end_, ahead - reserved_end_);
  if (s.ok()) {
    reserved_end_ = ahead;
    return s;
  }
  if (s.sys_errno() != ENOSPC || ahead == need) return s;
  MOMENTA_RETURN_IF_ERROR(AllocateRange(fd_.get(), segment_, reserved_end_, need - reserved_end_));
  reserved_end_ = need;
  return Status::OK();
}

void LogWriter::TrimReservation() {
  if (!fd_.valid() || reserved_end_ <= end_) return;
  // Truncating to the current size releases the blocks reserved past it.
  if (::ftruncate(fd_.get(), static_cast<off_t>(end_)) == 0) reserved_end_ = end_;
}

Status LogWriter::SyncNow() {
  MOMENTA_RETURN_IF_ERROR(Fault(LogFileOp::kSync, segment_));
  MOMENTA_RETURN_IF_ERROR(SyncData(fd_.get(), segment_));
  if (dir_unsynced_) {
    MOMENTA_RETURN_IF_ERROR(SyncDirectory(dir_));
    dir_unsynced_ = false;
  }
  synced_end_ = end_;
  return Status::OK();
}

Result<uint64_t> LogWriter::Append(std::span<const LogRecord> records) {
  if (!stopped_.ok()) return stopped_;
  if (records.empty()) return next_sequence_;
  const uint64_t first = next_sequence_;
  const int64_t now = WallClockMs();

  // Encode every frame first: the batch is one write.
  frame_.clear();
  std::vector<LogRecord> chunk;
  for (size_t done = 0; done < records.size();) {
    const size_t n = std::min<size_t>(records.size() - done, kMaxFrameRecords);
    chunk.assign(records.begin() + done, records.begin() + done + n);
    for (size_t k = 0; k < n; ++k) {
      chunk[k].sequence = first + done + k;
      if (chunk[k].time == kLogTimeNow) chunk[k].time = now;
    }
    AppendLogFrame(chunk, &frame_);
    done += n;
  }

  const bool in_unit = unit_left_ >= records.size();  // reserved: no rotation inside the unit
  if (!in_unit && !segment_.empty() && end_ > sizeof(LogSegmentHeader) &&
      end_ + frame_.size() > options_.segment_bytes) {
    if (Status s = FinishSegment(); !s.ok()) return stopped_ = s;
  }
  if (segment_.empty()) MOMENTA_RETURN_IF_ERROR(StartSegment());
  MOMENTA_RETURN_IF_ERROR(ReserveBlocks(frame_.size()));
  MOMENTA_RETURN_IF_ERROR(ReserveSequences(first + records.size() - 1));

  Status s = Fault(LogFileOp::kWrite, segment_);
  if (s.ok()) s = PwriteFully(fd_.get(), segment_, end_, frame_.size(), frame_.data());
  if (!s.ok()) {
    // Take back whatever part of the frames landed.
    if (::ftruncate(fd_.get(), static_cast<off_t>(end_)) != 0) {
      stopped_ = s;
    } else {
      reserved_end_ = end_;
    }
    return s;
  }
  const uint64_t before = end_;
  end_ += frame_.size();
  next_sequence_ += records.size();
  unit_left_ = in_unit ? unit_left_ - records.size() : 0;
  if (options_.sync == LogSync::kAlways) {
    if (Status synced = SyncNow(); !synced.ok()) {
      if (::ftruncate(fd_.get(), static_cast<off_t>(before)) == 0) {
        end_ = reserved_end_ = before;
        next_sequence_ = first;
      }
      return stopped_ = synced;
    }
  }
  return first;
}

Status LogWriter::Commit() {
  if (!stopped_.ok()) return stopped_;
  if (options_.sync == LogSync::kBatch && !segment_.empty() && (synced_end_ < end_ || dir_unsynced_)) {
    if (Status s = SyncNow(); !s.ok()) return stopped_ = s;
  }
  unit_left_ = 0;
  if (Status s = MarkLogged(); !s.ok()) return stopped_ = s;
  return Status::OK();
}

Result<size_t> LogWriter::DropSegmentsBefore(uint64_t sequence) {
  auto segments = ListLogSegments(dir_);
  if (!segments.ok()) return segments.status();
  size_t removed = 0;
  // Segment i holds records below the first of segment i + 1.
  for (size_t i = 0; i + 1 < segments->size(); ++i) {
    const LogSegmentFile& seg = (*segments)[i];
    if ((*segments)[i + 1].first_sequence > sequence || seg.path == segment_) break;
    if (::unlink(seg.path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(seg.path, errno);
    ++removed;
  }
  return removed;
}

Status LogWriter::Close() {
  if (!lock_) return stopped_;
  Status s = Commit();
  TrimReservation();
  fd_ = FileDescriptor();
  segment_.clear();
  lock_.reset();
  if (stopped_.ok()) stopped_ = Status::InvalidArgument(dir_, "the log writer is closed");
  return s;
}

}  // namespace momenta
