#include "stream/drive/window_driver.h"

#include <algorithm>
#include <cassert>

namespace momenta {
namespace {

// The first multiple of `every` at or after ts.
int64_t FirstMultipleFrom(int64_t ts, int64_t every) {
  return ts >= 0 ? (ts + every - 1) / every * every : -((-ts) / every * every);
}

// The data clock's last reports: under --every the last multiple reached,
// then (if time went on past it) the end; else the end.
void ReportEnd(Summarizer& s, int64_t every, int64_t next, const ReportFn& report) {
  if (every == 0) {
    report(s);
  } else if (s.now() >= next) {
    s.AdvanceTo(next);
    report(s);
  } else if (s.now() > next - every) {
    report(s);
  }
}

}  // namespace

Status RunDataClock(ItemSource& source, Summarizer& s, int64_t every, const ReportFn& report, StopToken stop) {
  assert(every >= 0);
  bool any = false;
  int64_t next = 0;  // the next report time under every > 0
  TimedItem x;
  while (!stop.requested()) {
    auto got = source.Next(&x, std::chrono::milliseconds(-1));
    if (!got.ok()) return got.status();
    if (*got == ItemSource::Got::kEnd) break;
    if (*got == ItemSource::Got::kNothing) continue;
    if (!any) {
      any = true;
      if (every > 0) next = FirstMultipleFrom(x.ts, every);
      s.AdvanceTo(x.ts);
    }
    if (every > 0) {
      while (x.ts > next) {
        s.AdvanceTo(std::max(next, s.now()));
        report(s);
        next += every;
      }
    } else if (x.ts > s.now()) {
      report(s);
    }
    s.Add(x.ts, x.item);
  }
  if (any) ReportEnd(s, every, next, report);
  return Status::OK();
}

Status RunWallClock(ItemSource& source, Summarizer& s, int64_t every, bool end_with_input, const ReportFn& report,
                    StopToken stop) {
  assert(every >= 1);
  int64_t next = WallMillis() / every * every + every;
  s.AdvanceTo(WallMillis());
  TimedItem x;
  while (!stop.requested()) {
    const int64_t now = WallMillis();
    if (now >= next) {
      s.AdvanceTo(std::max(now, s.now()));
      report(s);
      next = now / every * every + every;
      continue;
    }
    auto got = source.Next(&x, std::chrono::milliseconds(next - now));
    if (!got.ok()) return got.status();
    if (*got == ItemSource::Got::kEnd && end_with_input) break;
    if (*got != ItemSource::Got::kItem) continue;
    const int64_t at = WallMillis();
    s.AdvanceTo(std::max(at, s.now()));
    s.Add(std::min(x.ts, s.now()), x.item);
  }
  s.AdvanceTo(std::max(WallMillis(), s.now()));
  report(s);
  return Status::OK();
}

}  // namespace momenta
