#include "tools/stream_input.h"

#include <algorithm>
#include <charconv>

#include "storage/log_codec.h"
#include "stream/window_spec.h"
#include "tools/cli_common.h"

namespace momenta::cli {

Result<int64_t> ParseDuration(const std::string& text, const char* flag) {
  int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string_view unit(r.ptr, static_cast<size_t>(text.data() + text.size() - r.ptr));
  int64_t scale = 0;
  if (unit.empty() || unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "m") scale = 60 * 1000;
  else if (unit == "h") scale = 3600 * 1000;
  else if (unit == "d") scale = 24 * 3600 * 1000;
  if (text.empty() || r.ec != std::errc() || scale == 0 || v < 0 || v > kMaxTime / scale)
    return Status::InvalidArgument(flag, "'" + text + "' is not a duration (N, or N with ms, s, m, h, d)");
  return v * scale;
}

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<bool> LogSource::Next(int64_t* ts, int64_t* item, std::chrono::milliseconds wait) {
  LogRecord r;
  while (true) {
    auto more = follow_ ? reader_->NextWithin(&r, wait) : reader_->Next(&r);
    if (!more.ok()) return more.status();
    for (; damage_seen_ < reader_->damage().size(); ++damage_seen_)
      PrintNotice("update log: " + reader_->damage()[damage_seen_].ToString());
    if (!*more) return false;
    *ts = std::clamp<int64_t>(r.time, -kMaxTime, kMaxTime);
    if (mapping_.kind() == ItemMapping::Kind::kIndex) {
      *item = mapping_.FromIndex(r.index);
      return true;
    }
    const Value v = LogValueFromRaw(reader_->dtype(), r.new_raw);
    const double d = v.kind == Value::Kind::kFloat ? v.f
                     : v.kind == Value::Kind::kInt ? static_cast<double>(v.i)
                                                    : static_cast<double>(v.u);
    if (mapping_.FromValue(d, item)) return true;
    ++skipped_;
  }
}

}  // namespace momenta::cli
