#include "storage/log/log_scan.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>

#include "storage/log/log_codec.h"

namespace momenta {

namespace {
constexpr size_t kReadAhead = 256 * 1024;
constexpr size_t kScanChunk = 1024 * 1024;
constexpr size_t kFrameHeaderBytes = sizeof(LogFrameHeader);
}  // namespace

Result<std::unique_ptr<SegmentScanner>> SegmentScanner::Open(const std::string& path, uint64_t name_sequence) {
  auto fd = OpenFile(path, O_RDONLY);
  if (!fd.ok()) {
    if (fd.status().sys_errno() == ENOENT) return Status::NotFound(path, "segment removed");
    return fd.status();
  }
  std::unique_ptr<SegmentScanner> s(new SegmentScanner(path, name_sequence, std::move(*fd)));
  MOMENTA_RETURN_IF_ERROR(s->Refresh());
  auto bytes = s->View(0, sizeof(LogSegmentHeader));
  if (!bytes.ok()) return bytes.status();
  auto header = DecodeLogSegmentHeader(*bytes, path);
  if (!header.ok()) {
    s->header_status_ = header.status();
  } else if (header->first_sequence != name_sequence) {
    s->header_status_ =
        Status::Corruption(path, "header says first sequence " + std::to_string(header->first_sequence) +
                                     ", the file name " + std::to_string(name_sequence));
  } else {
    s->header_ = *header;
  }
  s->offset_ = std::min<uint64_t>(sizeof(LogSegmentHeader), s->size_);
  return s;
}

Status SegmentScanner::Refresh() {
  auto size = FileSize(fd_.get(), path_);
  if (!size.ok()) return size.status();
  size_ = *size;
  if (offset_ > size_) offset_ = size_;  // cut behind us
  buffer_.clear();                       // a writer may have cut and rewritten bytes we hold
  return Status::OK();
}

void SegmentScanner::Seek(uint64_t offset) {
  assert(offset <= size_);
  offset_ = offset;
}

Result<std::string_view> SegmentScanner::View(uint64_t offset, size_t length) {
  if (offset >= size_) return std::string_view();
  length = static_cast<size_t>(std::min<uint64_t>(length, size_ - offset));
  if (offset >= buffer_offset_ && offset + length <= buffer_offset_ + buffer_.size())
    return std::string_view(buffer_).substr(offset - buffer_offset_, length);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(std::max(length, kReadAhead), size_ - offset));
  buffer_.resize(want);
  buffer_offset_ = offset;
  size_t done = 0;
  while (done < want) {
    const ssize_t r = ::pread(fd_.get(), buffer_.data() + done, want - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      buffer_.clear();
      return Status::FromErrno(path_, errno);
    }
    if (r == 0) break;  // the file shrank since Refresh: what is gone reads as missing
    done += static_cast<size_t>(r);
  }
  buffer_.resize(done);
  return std::string_view(buffer_).substr(0, std::min(length, done));
}

Result<std::string> SegmentScanner::TryFrame(uint64_t at, std::vector<LogRecord>* records, uint32_t* claimed,
                                             uint64_t* end) {
  records->clear();
  *claimed = 0;
  auto head = View(at, kFrameHeaderBytes);
  if (!head.ok()) return head.status();
  if (head->size() < kFrameHeaderBytes)
    return "partial frame header (" + std::to_string(head->size()) + " of 16 bytes)";
  const auto h = DecodeLogFrameHeader(head->data());
  if (!h) return std::string("bad frame header");
  *claimed = h->count;
  const uint64_t bytes = LogFrameBytes(h->count);
  if (bytes > size_ - at) return "frame of " + std::to_string(bytes) + " bytes runs past the end of the file";
  auto payload = View(at + kFrameHeaderBytes, h->payload_bytes);
  if (!payload.ok()) return payload.status();
  if (payload->size() < h->payload_bytes)
    return "frame of " + std::to_string(bytes) + " bytes runs past the end of the file";
  std::string problem = DecodeLogFramePayload(*h, payload->data(), records);
  if (problem.empty()) *end = at + bytes;
  return problem;
}

Result<SegmentScanner::Step> SegmentScanner::Next(uint64_t after, std::vector<LogRecord>* records) {
  Step step;
  step.begin = offset_;
  records->clear();
  if (offset_ >= size_) {
    step.end = offset_ = size_;
    return step;  // kEnd
  }
  uint64_t end = 0;
  auto problem = TryFrame(offset_, records, &step.claimed, &end);
  if (!problem.ok()) return problem.status();
  if (problem->empty()) {
    step.kind = Step::kFrame;
    step.end = offset_ = end;
    const uint64_t first = records->front().sequence;
    if (first <= after)  // the records in [first, after]; no overflow at after = UINT64_MAX
      step.stale = static_cast<uint32_t>(after - first >= records->size() - 1 ? records->size() : after - first + 1);
    return step;
  }
  step.kind = Step::kDamage;
  step.problem = std::move(*problem);
  // Resume at the first valid frame after step.begin, found byte by byte. The
  // damaged frame's own claimed end is no shortcut: valid frames may start
  // inside that claim (and the search reaches the claimed end when none does).
  // Taking the claim only when it lies inside the file made an append change
  // the outcome: a claim running exactly to the end of the file was searched,
  // and once the writer appended, the jump hid records readers had returned.
  // With the search, the outcome depends only on whole frames in the file,
  // which appends and the recovery's cuts of a torn tail leave alone; a frame
  // running past the end is refused until its payload crc checks, which the
  // bytes an append adds make true only by a 32-bit chance. Any whole frame
  // ends the damage, whatever its sequences: one out of place (a duplicate,
  // a swap) is the caller's to report, and never part of a torn tail.
  for (uint64_t p = step.begin + 1; size_ - p >= kFrameHeaderBytes;) {
    auto chunk = View(p, kScanChunk + kFrameHeaderBytes - 1);
    if (!chunk.ok()) return chunk.status();
    if (chunk->size() < kFrameHeaderBytes) break;  // the file shrank
    uint64_t hit = 0;
    for (size_t i = 0; i + kFrameHeaderBytes <= chunk->size(); ++i) {
      if (DecodeLogFrameHeader(chunk->data() + i)) {
        hit = p + i;
        break;
      }
    }
    if (hit == 0) {
      p += chunk->size() - (kFrameHeaderBytes - 1);
      continue;
    }
    uint32_t ignored = 0;
    auto bad = TryFrame(hit, records, &ignored, &end);
    if (!bad.ok()) return bad.status();
    records->clear();
    if (bad->empty()) {
      step.end = offset_ = hit;
      return step;
    }
    p = hit + 1;
  }
  step.end = offset_ = size_;
  return step;
}

Result<std::optional<uint64_t>> SegmentScanner::LastSequenceAtEnd() {
  assert(header_status_.ok());
  const uint64_t body = sizeof(LogSegmentHeader);
  if (size_ <= body) return std::optional<uint64_t>(After(std::nullopt));
  std::vector<LogRecord> records;
  // Small frames first (a few records each: one page), then the CLI's
  // batches, then the largest frame there is.
  for (const uint64_t window : {uint64_t{4096}, uint64_t{kReadAhead}, LogFrameBytes(kMaxFrameRecords)}) {
    const uint64_t span = std::min(window, size_ - body);
    auto all = View(size_ - span, static_cast<size_t>(span));  // later views hit this buffer
    if (!all.ok()) return all.status();
    if (all->size() < span) return std::optional<uint64_t>();  // the file shrank
    for (uint32_t count = 1; count <= kMaxFrameRecords && LogFrameBytes(count) <= span; ++count) {
      const uint64_t at = size_ - LogFrameBytes(count);
      const auto h = DecodeLogFrameHeader(all->data() + (at - (size_ - span)));
      if (!h || h->count != count) continue;
      uint32_t claimed = 0;
      uint64_t end = 0;
      auto problem = TryFrame(at, &records, &claimed, &end);
      if (!problem.ok()) return problem.status();
      if (problem->empty()) return std::optional<uint64_t>(records.back().sequence);
      all = View(size_ - span, static_cast<size_t>(span));  // TryFrame may have moved the buffer
      if (!all.ok()) return all.status();
    }
    if (span == size_ - body) break;
  }
  return std::optional<uint64_t>();
}

uint64_t SegmentScanner::After(const std::optional<uint64_t>& last_sequence) const {
  const uint64_t before_first = name_sequence_ > 0 ? name_sequence_ - 1 : 0;
  return std::max(before_first, last_sequence.value_or(0));
}

LogDamage SegmentScanner::DamageOf(const Step& step) const {
  LogDamage d;
  d.kind = step.end == size_ ? LogDamage::Kind::kTornTail : LogDamage::Kind::kCorruptFrames;
  d.segment = path_;
  d.offset = step.begin;
  d.bytes = step.end - step.begin;
  d.problem = step.problem;
  if (step.claimed > 0) d.records_lost = step.claimed;
  return d;
}

LogDamage SegmentScanner::OutOfPlaceOf(const Step& step, const std::vector<LogRecord>& records, uint64_t after) const {
  assert(step.kind == Step::kFrame && step.stale > 0 && step.stale <= records.size());
  LogDamage d;
  d.kind = LogDamage::Kind::kOutOfPlace;
  d.segment = path_;
  d.offset = step.begin;
  d.bytes = step.stale == records.size() ? step.end - step.begin : uint64_t{step.stale} * sizeof(LogRecord);
  d.problem = "a duplicate or out of order";
  d.records_lost = 0;
  d.first_skipped = records.front().sequence;
  d.records_skipped = step.stale;
  d.after = after;
  return d;
}

LogDamage SegmentScanner::HeaderDamage() const {
  assert(!header_status_.ok());
  LogDamage d;
  d.kind = LogDamage::Kind::kBadSegment;
  d.segment = path_;
  d.bytes = size_;
  // "Corruption: <path>: <problem>" -> "<problem>"
  const std::string text = header_status_.ToString();
  const std::string marker = path_ + ": ";
  const size_t at = text.find(marker);
  d.problem = at == std::string::npos ? text : text.substr(at + marker.size());
  return d;
}

}  // namespace momenta
