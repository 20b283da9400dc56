#include "storage/log/log_reader.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <thread>

#include "storage/log/log_codec.h"
#include "storage/log/log_mark.h"
#include "storage/log/log_scan.h"

namespace momenta {

LogReader::LogReader(std::string dir, LogReaderOptions options) : dir_(std::move(dir)), options_(options) {}

LogReader::~LogReader() = default;

Result<std::unique_ptr<LogReader>> LogReader::Open(const std::string& log_dir, LogReaderOptions options) {
  std::unique_ptr<LogReader> r(new LogReader(log_dir, options));
  // The mark first: every record at or below it was written before it, so
  // the segments listed after it hold them unless they were lost.
  auto mark = ReadLogMark(log_dir);
  if (mark.ok()) {
    if (*mark) r->mark_logged_ = (*mark)->logged;
  } else if (mark.status().code() == Status::Code::kCorruption) {
    LogDamage d;
    d.kind = LogDamage::Kind::kBadMark;
    d.segment = LogMarkPath(log_dir);
    const std::string text = mark.status().ToString();
    d.problem = text.substr(text.find(d.segment + ": ") + d.segment.size() + 2);
    r->damage_.push_back(std::move(d));
  } else if (mark.status().sys_errno() != ENOTDIR) {
    return mark.status();
  }
  MOMENTA_RETURN_IF_ERROR(r->List());
  return r;
}

Status LogReader::List() {
  auto segments = ListLogSegments(dir_);
  if (!segments.ok()) return segments.status();
  segments_ = std::move(*segments);
  const auto by_first = [](const LogSegmentFile& s, uint64_t v) { return s.first_sequence < v; };
  if (last_opened_) {
    // The first segment newer than the one opened last.
    next_segment_ = static_cast<size_t>(
        std::lower_bound(segments_.begin(), segments_.end(), *last_opened_ + 1, by_first) - segments_.begin());
  } else {
    // The last segment starting at or before from_sequence (it may hold it).
    const auto it = std::lower_bound(segments_.begin(), segments_.end(), options_.from_sequence + 1, by_first);
    next_segment_ = it == segments_.begin() ? 0 : static_cast<size_t>(it - segments_.begin()) - 1;
  }
  return Status::OK();
}

Result<bool> LogReader::OpenNextSegment() {
  while (next_segment_ < segments_.size()) {
    const LogSegmentFile seg = segments_[next_segment_++];
    last_opened_ = seg.first_sequence;
    last_path_ = seg.path;
    auto s = SegmentScanner::Open(seg.path, seg.first_sequence);
    if (!s.ok()) {
      if (s.status().code() == Status::Code::kNotFound) continue;  // dropped since listed
      return s.status();
    }
    const Status& header = (*s)->header_status();
    if (!expected_) expected_ = seg.first_sequence;
    if (!header.ok()) {
      if (header.code() == Status::Code::kNotSupported) return header;
      AddDamage((*s)->HeaderDamage());
      continue;
    }
    current_ = std::move(*s);
    current_final_ = next_segment_ < segments_.size();
    return true;
  }
  return false;
}

Result<bool> LogReader::AtSegmentEnd() {
  if (options_.follow && !current_final_) {
    // Newer segments first, then our size: a writer finishes a segment before
    // it creates the next one, so a segment seen after its successor is whole.
    MOMENTA_RETURN_IF_ERROR(List());
    const bool newer = next_segment_ < segments_.size();
    const uint64_t old_size = current_->size();
    MOMENTA_RETURN_IF_ERROR(current_->Refresh());
    if (current_->size() != old_size) return true;  // appended (or cut): scan on
    if (!newer) return false;                       // nothing new for now
    current_final_ = true;
    return true;  // scan once more as a finished segment
  }
  current_.reset();
  return true;
}

void LogReader::AddDamage(LogDamage d) {
  if (d.kind != LogDamage::Kind::kMissingRecords) unsettled_.push_back(damage_.size());
  damage_.push_back(std::move(d));
}

void LogReader::AccountFrame(uint64_t first_sequence, uint64_t count, uint64_t offset) {
  const uint64_t expected = expected_.value_or(first_sequence);
  if (first_sequence > expected) {
    const uint64_t gap = first_sequence - expected;
    if (gaps_.size() == kMaxGaps) gaps_.erase(gaps_.begin());
    gaps_.emplace_back(expected, first_sequence - 1);
    if (!unsettled_.empty()) {
      // The whole gap goes to the first damage since the last valid frame.
      for (size_t k = 1; k < unsettled_.size(); ++k) damage_[unsettled_[k]].records_lost.reset();
      damage_[unsettled_[0]].records_lost = gap;
      damage_[unsettled_[0]].first_lost = expected;
    } else {
      LogDamage d;
      d.kind = LogDamage::Kind::kMissingRecords;
      d.segment = current_->path();
      d.offset = offset;
      d.problem = "sequence gap";
      d.records_lost = gap;
      d.first_lost = expected;
      damage_.push_back(std::move(d));
    }
  } else {
    for (size_t k : unsettled_) damage_[k].records_lost = 0;
  }
  unsettled_.clear();
  last_sequence_ = first_sequence + count - 1;
  expected_ = *last_sequence_ + 1;
}

bool LogReader::InGap(uint64_t sequence, bool take) {
  // gaps_ is sorted: AccountFrame appends above every gap, takes split one.
  auto it = std::upper_bound(gaps_.begin(), gaps_.end(), sequence,
                             [](uint64_t v, const std::pair<uint64_t, uint64_t>& g) { return v < g.first; });
  if (it == gaps_.begin()) return false;
  --it;
  if (sequence > it->second) return false;
  if (!take) return true;
  const auto [first, last] = *it;
  if (first == last) {
    gaps_.erase(it);
  } else if (sequence == first) {
    it->first = first + 1;
  } else if (sequence == last) {
    it->second = last - 1;
  } else {
    it->second = sequence - 1;
    gaps_.insert(it + 1, {sequence + 1, last});
  }
  return true;
}

void LogReader::TakeOutOfPlace(LogDamage d) {
  const size_t stale = static_cast<size_t>(d.records_skipped);
  std::vector<LogRecord> kept;
  size_t never_read = 0;
  for (size_t k = 0; k < stale; ++k) {
    if (!InGap(frame_[k].sequence, options_.out_of_order)) continue;
    ++never_read;
    if (options_.out_of_order) kept.push_back(frame_[k]);
  }
  d.problem = never_read == 0 ? "a duplicate" : never_read == stale ? "out of order" : "duplicates and out of order";
  d.returned = !kept.empty();
  kept.insert(kept.end(), frame_.begin() + static_cast<ptrdiff_t>(stale), frame_.end());
  frame_ = std::move(kept);
  damage_.push_back(std::move(d));
}

void LogReader::CheckEnd() {
  if (end_checked_) return;
  end_checked_ = true;
  if (!mark_logged_) return;
  const uint64_t expected = expected_.value_or(std::max<uint64_t>(options_.from_sequence, 1));
  if (*mark_logged_ < expected) return;
  const uint64_t lost = *mark_logged_ - expected + 1;
  if (!unsettled_.empty()) {
    for (size_t k = 1; k < unsettled_.size(); ++k) damage_[unsettled_[k]].records_lost.reset();
    damage_[unsettled_[0]].records_lost = lost;
    damage_[unsettled_[0]].first_lost = expected;
    unsettled_.clear();
    return;
  }
  LogDamage d;
  d.kind = LogDamage::Kind::kMissingEnd;
  d.segment = last_path_.empty() ? dir_ : last_path_;
  d.offset = current_ ? current_->size() : 0;
  d.problem = "the log ends at sequence " + std::to_string(expected - 1) + ", but the high-water mark says sequence " +
              std::to_string(*mark_logged_) + " was logged";
  d.records_lost = lost;
  d.first_lost = expected;
  damage_.push_back(std::move(d));
}

Result<bool> LogReader::Next(LogRecord* record) {
  for (;;) {
    while (frame_pos_ < frame_.size()) {
      const LogRecord& r = frame_[frame_pos_++];
      if (r.sequence < options_.from_sequence || r.time < options_.since || r.time >= options_.until) continue;
      *record = r;
      return true;
    }
    frame_.clear();
    frame_pos_ = 0;
    if (!current_) {
      auto opened = OpenNextSegment();
      if (!opened.ok()) return opened.status();
      if (*opened) continue;
      if (!options_.follow) {
        CheckEnd();
        return false;
      }
      MOMENTA_RETURN_IF_ERROR(List());
      opened = OpenNextSegment();
      if (!opened.ok()) return opened.status();
      if (!*opened) {
        CheckEnd();
        return false;
      }
      continue;
    }
    const uint64_t after = current_->After(last_sequence_);
    auto step = current_->Next(after, &frame_);
    if (!step.ok()) return step.status();
    switch (step->kind) {
      case SegmentScanner::Step::kFrame:
        if (step->stale > 0) TakeOutOfPlace(current_->OutOfPlaceOf(*step, frame_, after));
        if (!frame_.empty() && frame_.back().sequence > after) {
          const uint64_t first = std::max(frame_.front().sequence, after + 1);
          AccountFrame(first, frame_.back().sequence - first + 1, step->begin);
        }
        dtype_ = LogSegmentDType(current_->header());
        array_tag_ = current_->header().array_tag;
        break;
      case SegmentScanner::Step::kEnd: {
        auto more = AtSegmentEnd();
        if (!more.ok()) return more.status();
        if (!*more) {
          CheckEnd();
          return false;
        }
        break;
      }
      case SegmentScanner::Step::kDamage:
        if (step->end == current_->size() && options_.follow && !current_final_) {
          // Maybe a frame being written: look again once the file changes.
          current_->Seek(step->begin);
          auto more = AtSegmentEnd();
          if (!more.ok()) return more.status();
          if (!*more) return false;
          break;
        }
        AddDamage(current_->DamageOf(*step));
        break;
    }
  }
}

Result<bool> LogReader::NextWithin(LogRecord* record, std::chrono::milliseconds timeout,
                                   std::chrono::milliseconds poll) {
  assert(options_.follow);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto got = Next(record);
    if (!got.ok() || *got) return got;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(poll, deadline - now));
  }
}

DType LogReader::dtype() const { return dtype_; }
uint64_t LogReader::array_tag() const { return array_tag_; }

}  // namespace momenta
