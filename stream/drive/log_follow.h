// Following an array's update log with a lone window (`momenta window --log
// PATH --follow`), on the log's own clock or on the wall clock.
//
// The log's own clock: time is the largest record time read. A record is
// complete once its group is in the log: each `momenta update` (or group of
// `update --follow`) appends its records in one piece, so once the reader
// has read to the log's end every time up to the newest record's is
// complete, and only a record stamped more than the tardiness before it,
// appended later, is late. Nothing is lost to the time it takes to read.
//
//   auto log = LogSource::Open(dir, ItemMapping(), /*follow=*/true, stop, notice);
//   auto s = Summarizer::Create({/*window=*/60000, /*tardiness=*/0}, 0.01);
//   Status st = RunLogClock(**log, *s, 0, [](const Summarizer& s) { Print(s.Report(10, {0.5})); }, stop, notice);
#pragma once

#include <cstdint>

#include "storage/util/status.h"
#include "stream/drive/log_source.h"
#include "stream/drive/window_driver.h"

namespace momenta {

// The log's own clock, until a stop. It starts on the records the first
// window can hold (stamped from the newest one's time - W - tau on; older
// ones have left every window it reports, and it tells `notice` so), and
// reports nothing before that newest time: a follower started on a log, or
// restarted, prints the same window as one that ran all along. Then a report
// for each tick once complete (a later record came, or the log was read to
// its end), or with every > 0 the state at each multiple of `every` once
// passed and, each time the log has been read to its end, the state at its
// newest time; nothing while nothing changes. At the stop, the state then if
// it was not reported. Errors are the log's. REQUIRES: every >= 0
Status RunLogClock(LogSource& log, Summarizer& s, int64_t every, const ReportFn& report, StopToken stop,
                   const NoticeFn& notice);

// Before a followed log is summarized on the wall clock (RunWallClock): reads
// the records of the current window (stamped from now - W - tau on) up to
// the log's end into `s` with their own stamps (later than now: now), so
// that they are counted, not refused as late. Errors are the log's.
Status CatchUpOnLog(LogSource& log, Summarizer& s, StopToken stop, const NoticeFn& notice);

// Where a follower of the log starts: `since` when the log holds records
// before it (then it tells `notice`, naming `why`), else its first record.
Status StartLogAt(LogSource& log, int64_t since, const std::string& why, const NoticeFn& notice);

}  // namespace momenta
