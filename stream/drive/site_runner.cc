#include "stream/drive/site_runner.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "stream/drive/log_follow.h"
#include "stream/drive/log_source.h"
#include "stream/window/arrival_hold.h"
#include "stream/window/window_spec.h"

namespace momenta {

void SetBackoffForHeartbeat(std::chrono::milliseconds heartbeat, SiteClientOptions* options) {
  // (With the 2 s cap alone, a root down a few seconds waited up to 2.5 s for its sites.)
  options->backoff_max = std::clamp(heartbeat / 2, options->backoff_min, options->backoff_max);
}

namespace {

using Clock = std::chrono::steady_clock;

// A site (re)started on a long log needs only the records its first window
// can hold: those stamped before the newest one's time - W - tau have left
// every window it will report. (It ran the protocol over the whole log, so a
// restart took longer the older the log: found by bench/kill_driver site,
// seconds per restart after ten minutes.) Until it has read through that
// newest time it stays quiet (SetQuiet): the windows of earlier times hold
// records it skipped, so no such clock may reach the root; then its whole
// state goes out as one snapshot. Returns that newest time, or nullopt when
// nothing is skipped.
Result<std::optional<int64_t>> SkipOldRecords(LogSource& log, SiteClient& c, const NoticeFn& notice) {
  auto times = ReadLogTimes(log.log_dir());
  if (!times.ok()) return times.status();
  if (!times->newest) return std::optional<int64_t>();
  const int64_t since = std::max(-kMaxTime, *times->newest - c.params().spec.window - c.params().spec.tardiness);
  if (!times->first || *times->first >= since) return std::optional<int64_t>();
  MOMENTA_RETURN_IF_ERROR(log.StartAt(since));
  if (notice)
    notice("starting at time " + std::to_string(since) + " of the log (its newest record's time " +
           std::to_string(*times->newest) +
           " minus the window and the tardiness): older records have left every window");
  c.SetQuiet(true);
  return std::optional<int64_t>(*times->newest);
}

class SiteLoop {
 public:
  SiteLoop(SiteClient& c, ItemSource& source, const SiteLoopOptions& o, StopToken stop)
      : c_(c),
        source_(source),
        log_(dynamic_cast<LogSource*>(&source)),
        o_(o),
        stop_(stop),
        tau_(c.params().spec.tardiness),
        hold_(tau_),
        frames_seen_(c.sent().frames) {}

  Result<SiteLoopEnd> Run();

 private:
  // Reads the next thing (or sleeps, once the source ended) into *x.
  Result<ItemSource::Got> Read(TimedItem* x);
  // The wall clock: an item arrives when it is read, stamped at most now;
  // more than tau late it is dropped. The protocol runs every tick_ms.
  void StepWall(ItemSource::Got got, const TimedItem& x);
  // The data clock; true when the clock is due to go out.
  bool StepData(ItemSource::Got got, const TimedItem& x);
  void RunThrough(int64_t upto, bool to_clock);
  void NoteSends();

  SiteClient& c_;
  ItemSource& source_;
  LogSource* const log_;  // the source, when it is an update log
  const SiteLoopOptions& o_;
  const StopToken stop_;
  const int64_t tau_;
  ArrivalHold hold_;
  std::vector<Arrival> group_;
  Clock::time_point last_sent_ = Clock::now();  // when the client last sent a frame
  uint64_t frames_seen_;                        // c_.sent().frames as of last_sent_
  std::optional<int64_t> quiet_until_;          // catching up: nothing reported before it
  bool wall_catch_up_ = false;                  // wall clock on a log: reading the window's records first
  bool ended_ = false;                          // the source is over
  bool read_item_ = false;                      // the last Read gave an item
  int64_t next_tick_ = WallMillis();            // wall clock: when the protocol runs next
};

void SiteLoop::NoteSends() {
  if (c_.sent().frames != frames_seen_) {
    frames_seen_ = c_.sent().frames;
    last_sent_ = Clock::now();
  }
}

// Runs the protocol through time `upto`: each stamp's items as its own tick
// (data clock) or all of them as tick `upto`, their stamps moved up into
// [upto - tau, upto] (wall clock: at most one tick late); then, when
// `to_clock`, an empty tick moves the site's clock to `upto` itself.
void SiteLoop::RunThrough(int64_t upto, bool to_clock) {
  if (!hold_.taken() || upto > *hold_.taken()) {
    const std::vector<Arrival> items = hold_.Take(upto);
    if (o_.wall && !wall_catch_up_) {
      group_ = items;
      for (Arrival& x : group_) x.ts = std::max(x.ts, upto - tau_);
      c_.Tick(upto, group_);
      return;
    }
    for (size_t i = 0; i < items.size();) {
      group_.clear();
      size_t j = i;
      while (j < items.size() && items[j].ts == items[i].ts) group_.push_back(items[j++]);
      c_.Tick(items[i].ts, group_);
      i = j;
    }
  }
  if (!o_.wall && to_clock && (!c_.clock() || *c_.clock() < upto)) c_.Tick(upto, {});
}

Result<ItemSource::Got> SiteLoop::Read(TimedItem* x) {
  // A log that just gave a record is asked again without waiting: the moment
  // it has none, what was read is complete and goes out (not 50 ms later).
  const auto data_wait = ended_                          ? o_.heartbeat
                         : log_ != nullptr && read_item_ ? std::chrono::milliseconds(0)
                                                         : std::chrono::milliseconds(50);
  const auto wait = o_.wall ? std::chrono::milliseconds(std::max<int64_t>(0, next_tick_ - WallMillis())) : data_wait;
  if (ended_) {
    stop_.SleepUnlessStopped(wait);
    return ItemSource::Got::kNothing;
  }
  auto got = source_.Next(x, wait);
  if (got.ok() && *got == ItemSource::Got::kEnd) ended_ = true;
  read_item_ = got.ok() && *got == ItemSource::Got::kItem;
  return got;
}

void SiteLoop::StepWall(ItemSource::Got got, const TimedItem& x) {
  const int64_t now = WallMillis();
  if (wall_catch_up_) {
    // The log's records of the current window, with their own stamps (at
    // most now), each stamp its own tick once the log is read to its end.
    if (got == ItemSource::Got::kItem && x.has_item) hold_.Add(std::min(x.ts, now), x.item);
    if (got == ItemSource::Got::kItem) return;
    if (hold_.clock()) RunThrough(*hold_.clock(), true);
    wall_catch_up_ = false;
  }
  hold_.Advance(now);
  if (got == ItemSource::Got::kItem && x.has_item) hold_.Add(std::min(x.ts, now), x.item);
  if (now >= next_tick_ || ended_) {
    // Read to its end, the input has nothing more for any time.
    RunThrough(ended_ ? now : now - tau_ - 1, true);
    next_tick_ = now + o_.tick_ms;
  }
}

bool SiteLoop::StepData(ItemSource::Got got, const TimedItem& x) {
  const bool read = got == ItemSource::Got::kItem;
  if (read && x.has_item) hold_.Add(x.ts, x.item);
  if (read && !x.has_item) hold_.Advance(x.ts);  // a bare TIMESTAMP
  // Complete: everything when the input ended, and a followed log read to
  // its end (each `momenta update` appends its records in one piece; a
  // record appended later at or before a time already reported is late).
  // Otherwise what tardiness allows: clock - tau - 1.
  const bool whole = ended_ || (log_ != nullptr && got == ItemSource::Got::kNothing);
  const bool due = !read || Clock::now() - last_sent_ >= o_.heartbeat;
  if (const auto upto = whole ? hold_.clock() : hold_.Complete()) RunThrough(*upto, due);
  if (quiet_until_ && hold_.taken() && *hold_.taken() >= *quiet_until_) {
    quiet_until_.reset();
    c_.SetQuiet(false);
  }
  NoteSends();
  return due;
}

Result<SiteLoopEnd> SiteLoop::Run() {
  if (log_ != nullptr && !o_.wall) {
    auto quiet_until = SkipOldRecords(*log_, c_, o_.notice);
    if (!quiet_until.ok()) return quiet_until.status();
    quiet_until_ = *quiet_until;
  }
  if (log_ != nullptr && o_.wall) {
    // Live on the wall clock, the records already in the window are read
    // first (else every one would be late): from now - W - tau on.
    const int64_t since = std::max(-kMaxTime, WallMillis() - c_.params().spec.window - c_.params().spec.tardiness);
    MOMENTA_RETURN_IF_ERROR(StartLogAt(*log_, since, "the wall clock minus the window and the tardiness", o_.notice));
    wall_catch_up_ = true;
  }
  while (!stop_.requested()) {
    TimedItem x;
    auto got = Read(&x);
    if (!got.ok()) return got.status();
    if (stop_.requested()) break;
    if (o_.wall) {
      StepWall(*got, x);
    } else if (!StepData(*got, x)) {
      continue;  // busy: flush only now and then
    }
    // Idle (or due): the clock goes out.
    if (!o_.wall || ended_) c_.Flush();  // live, the heartbeat tells the clock
    // The input ended: the root keeps the final state. (On the wall clock
    // time goes on: the site stays live, its window emptying as it passes,
    // unless it is about to exit.)
    if (ended_ && !c_.finished() && (!o_.wall || o_.once)) c_.Finish();
    NoteSends();
    if (ended_ && o_.once) break;
    if (Clock::now() - last_sent_ >= o_.heartbeat) {
      c_.Heartbeat();
      NoteSends();
    }
  }
  return SiteLoopEnd{hold_.dropped()};
}

}  // namespace

Result<SiteLoopEnd> RunSiteLoop(SiteClient& c, ItemSource& source, const SiteLoopOptions& options, StopToken stop) {
  return SiteLoop(c, source, options, stop).Run();
}

}  // namespace momenta
