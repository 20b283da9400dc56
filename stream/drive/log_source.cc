#include "stream/drive/log_source.h"

#include <algorithm>

#include "storage/log/log_codec.h"
#include "storage/log/log_segments.h"
#include "stream/window/window_spec.h"

namespace momenta {

Result<LogTimes> ReadLogTimes(const std::string& log_dir) {
  auto segments = ListLogSegments(log_dir);
  if (!segments.ok()) return segments.status();
  LogTimes t;
  if (segments->empty()) return t;
  LogRecord r;
  {
    auto reader = LogReader::Open(log_dir);
    if (!reader.ok()) return reader.status();
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status();
    if (*more) t.first = r.time;
  }
  LogReaderOptions o;
  o.from_sequence = segments->back().first_sequence;
  auto reader = LogReader::Open(log_dir, o);
  if (!reader.ok()) return reader.status();
  while (true) {
    auto more = (*reader)->Next(&r);
    if (!more.ok()) return more.status();
    if (!*more) break;
    t.newest = std::max(t.newest.value_or(r.time), r.time);
  }
  return t;
}

LogSource::LogSource(std::string log_dir, std::unique_ptr<LogReader> reader, ItemMapping mapping, bool follow,
                     StopToken stop, NoticeFn notice)
    : log_dir_(std::move(log_dir)),
      reader_(std::move(reader)),
      mapping_(mapping),
      follow_(follow),
      stop_(stop),
      notice_(std::move(notice)) {}

Result<std::unique_ptr<LogSource>> LogSource::Open(const std::string& log_dir, ItemMapping mapping, bool follow,
                                                   StopToken stop, NoticeFn notice) {
  LogReaderOptions options;
  options.follow = follow;
  auto reader = LogReader::Open(log_dir, options);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<LogSource>(
      new LogSource(log_dir, std::move(*reader), mapping, follow, stop, std::move(notice)));
}

Status LogSource::StartAt(int64_t since) {
  LogReaderOptions options;
  options.follow = follow_;
  options.since = since;
  auto reader = LogReader::Open(log_dir_, options);
  if (!reader.ok()) return reader.status();
  reader_ = std::move(*reader);
  damage_seen_ = 0;
  skipped_ = 0;
  return Status::OK();
}

Result<bool> LogSource::NextRecord(LogRecord* r, std::chrono::milliseconds wait) {
  if (!follow_) return reader_->Next(r);
  // In slices, so that a stop is seen within 100 ms.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto more = reader_->NextWithin(r, std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(100)));
    if (!more.ok() || *more || left.count() <= 100 || stop_.requested()) return more;
  }
}

Result<ItemSource::Got> LogSource::Next(TimedItem* out, std::chrono::milliseconds wait) {
  LogRecord r;
  while (true) {
    auto more = NextRecord(&r, wait);
    if (!more.ok()) return more.status();
    for (; damage_seen_ < reader_->damage().size(); ++damage_seen_)
      if (notice_) notice_("update log: " + reader_->damage()[damage_seen_].ToString());
    if (!*more) return follow_ ? Got::kNothing : Got::kEnd;
    out->ts = std::clamp<int64_t>(r.time, -kMaxTime, kMaxTime);
    out->has_item = true;
    if (mapping_.kind() == ItemMapping::Kind::kIndex) {
      out->item = mapping_.FromIndex(r.index);
      return Got::kItem;
    }
    const Value v = LogValueFromRaw(reader_->dtype(), r.new_raw);
    const double d = v.kind == Value::Kind::kFloat ? v.f
                     : v.kind == Value::Kind::kInt ? static_cast<double>(v.i)
                                                   : static_cast<double>(v.u);
    if (mapping_.FromValue(d, &out->item)) return Got::kItem;
    ++skipped_;
  }
}

}  // namespace momenta
