#include "stream/drive/log_follow.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <optional>
#include <string>

#include "stream/window/window_spec.h"

namespace momenta {
namespace {

// A wait for new records once the log has been read to its end: a stop is
// seen within 100 ms whatever it is (LogSource::Next).
constexpr std::chrono::milliseconds kIdleWait{200};

// The first multiple of `every` at or after ts.
int64_t FirstMultipleFrom(int64_t ts, int64_t every) {
  return ts >= 0 ? (ts + every - 1) / every * every : -((-ts) / every * every);
}

class LogClock {
 public:
  LogClock(Summarizer& s, int64_t every, const ReportFn& report, std::optional<int64_t> quiet_until)
      : s_(s), every_(every), report_(report), quiet_until_(quiet_until) {}

  void OnRecord(const TimedItem& x);
  // The log was read to its end: everything read is complete.
  void OnIdle() {
    if (changed_) Emit();
  }
  void OnStop() { OnIdle(); }

 private:
  // Reports the state at s_.now(), unless that is before quiet_until_.
  void Emit();

  Summarizer& s_;
  const int64_t every_;
  const ReportFn& report_;
  const std::optional<int64_t> quiet_until_;  // catching up: no report before it
  bool any_ = false;                          // a record was read
  bool changed_ = false;                      // the state moved since the last report
  int64_t next_ = 0;                          // the next multiple of every_ to report (every_ > 0)
};

void LogClock::Emit() {
  changed_ = false;
  if (quiet_until_ && s_.now() < *quiet_until_) return;
  report_(s_);
}

void LogClock::OnRecord(const TimedItem& x) {
  if (!any_) {
    any_ = true;
    s_.AdvanceTo(std::max(s_.now(), x.ts));
    if (every_ > 0) next_ = FirstMultipleFrom(x.ts, every_);
  }
  if (every_ > 0) {
    // Multiples before the end of the catch-up are not reported: skip them at once.
    if (quiet_until_ && next_ < *quiet_until_ && x.ts > next_)
      next_ = std::max(next_, FirstMultipleFrom(std::min(x.ts, *quiet_until_), every_));
    while (x.ts > next_) {
      s_.AdvanceTo(std::max(next_, s_.now()));
      Emit();
      next_ += every_;
    }
  } else if (x.ts > s_.now() && changed_) {
    Emit();
  }
  s_.Add(x.ts, x.item);
  changed_ = true;
}

}  // namespace

Status StartLogAt(LogSource& log, int64_t since, const std::string& why, const NoticeFn& notice) {
  auto times = ReadLogTimes(log.log_dir());
  if (!times.ok()) return times.status();
  if (!times->first || *times->first >= since) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(log.StartAt(since));
  if (notice)
    notice("starting at time " + std::to_string(since) + " of the log (" + why +
           "): older records have left every window");
  return Status::OK();
}

Status RunLogClock(LogSource& log, Summarizer& s, int64_t every, const ReportFn& report, StopToken stop,
                   const NoticeFn& notice) {
  assert(every >= 0);
  const WindowSpec& spec = s.count().spec();
  auto times = ReadLogTimes(log.log_dir());
  if (!times.ok()) return times.status();
  if (times->newest) {
    const int64_t since = std::max(-kMaxTime, *times->newest - spec.window - spec.tardiness);
    MOMENTA_RETURN_IF_ERROR(StartLogAt(
        log, since,
        "its newest record's time " + std::to_string(*times->newest) + " minus the window and the tardiness", notice));
  }
  LogClock clock(s, every, report, times->newest);
  bool idle = false;
  TimedItem x;
  while (!stop.requested()) {
    auto got = log.Next(&x, idle ? kIdleWait : std::chrono::milliseconds(0));
    if (!got.ok()) return got.status();
    if (*got == ItemSource::Got::kItem) {
      clock.OnRecord(x);
      idle = false;
    } else if (!idle) {
      clock.OnIdle();
      idle = true;
    }
  }
  clock.OnStop();
  return Status::OK();
}

Status CatchUpOnLog(LogSource& log, Summarizer& s, StopToken stop, const NoticeFn& notice) {
  const WindowSpec& spec = s.count().spec();
  const int64_t now = WallMillis();
  MOMENTA_RETURN_IF_ERROR(StartLogAt(log, std::max(-kMaxTime, now - spec.window - spec.tardiness),
                                     "the wall clock minus the window and the tardiness", notice));
  TimedItem x;
  bool any = false;
  while (!stop.requested()) {
    auto got = log.Next(&x, std::chrono::milliseconds(0));
    if (!got.ok()) return got.status();
    if (*got != ItemSource::Got::kItem) break;
    const int64_t ts = std::min(x.ts, now);
    if (!any) s.AdvanceTo(std::max(s.now(), ts));
    any = true;
    s.Add(ts, x.item);
  }
  return Status::OK();
}

}  // namespace momenta
