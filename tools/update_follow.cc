#include "tools/update_follow.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "storage/array/array_file.h"
#include "storage/util/json_writer.h"
#include "tools/cli_common.h"
#include "tools/update_parse.h"

namespace momenta::cli {
namespace {

using Clock = std::chrono::steady_clock;

int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The group being gathered, and what closing it does.
class GroupCommit {
 public:
  GroupCommit(BufferedArray& ba, const FollowOptions& options, FollowStats& stats)
      : ba_(ba), options_(options), stats_(stats) {}

  bool empty() const { return updates_.empty(); }
  bool full() const { return updates_.size() >= options_.group; }
  // Milliseconds left before the group must close (<= 0: now).
  int64_t ms_left() const {
    const auto open_for = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - opened_).count();
    return options_.max_delay_ms - open_for;
  }
  void Add(const IndexedValue& u) {
    if (updates_.empty()) opened_ = Clock::now();
    updates_.push_back(u);
  }

  // Applies and commits the group, then acknowledges it. A stop signal
  // before or during the Apply leaves the group (or its tail) unapplied and
  // unacknowledged: what was applied is committed and the status says how much.
  [[nodiscard]] Status Close() {
    if (updates_.empty()) return Status::OK();
    size_t applied = 0;
    const Status s = ba_.Apply(updates_, &applied);
    if (!s.ok()) {
      stats_.updates += applied;
      if (applied > 0) (void)ba_.Commit();
      return s.WithNote("the last group's first " + std::to_string(applied) + " of " +
                        Counted(updates_.size(), "update") + (applied == 1 ? " was" : " were") +
                        " applied, none acknowledged");
    }
    MOMENTA_RETURN_IF_ERROR(ba_.Commit());
    stats_.updates += updates_.size();
    ++stats_.groups;
    if (options_.ack) {
      const uint64_t seq = ba_.applied_sequence();
      if (options_.json) {
        JsonWriter j;
        j.BeginObject().Key("seq").UInt(seq).Key("count").UInt(updates_.size()).EndObject();
        std::printf("%s\n", j.str().c_str());
      } else {
        std::printf("%llu %zu\n", static_cast<unsigned long long>(seq), updates_.size());
      }
      std::fflush(stdout);
    }
    updates_.clear();
    return Status::OK();
  }

 private:
  BufferedArray& ba_;
  const FollowOptions& options_;
  FollowStats& stats_;
  std::vector<IndexedValue> updates_;
  Clock::time_point opened_;
};

}  // namespace

Status FollowUpdates(BufferedArray& ba, LineReader& in, const FollowOptions& options, FollowStats* stats) {
  FollowStats local;
  FollowStats& st = stats ? *stats : local;
  st = FollowStats{};
  GroupCommit group(ba, options, st);
  const DType dtype = ba.array().dtype();
  const uint64_t length = ba.length();
  // The group closes first; the failure that stopped the stream is reported
  // (with the group's own failure noted, if it had one).
  auto stop = [&](const Status& why) {
    const Status closed = group.Close();
    if (closed.ok()) return why;
    // A stop signal also stops the group's Apply: its status says what stayed.
    if (why.code() == Status::Code::kInterrupted && closed.code() == why.code()) return closed;
    return why.WithNote("closing the open group failed: " + closed.ToString());
  };
  while (true) {
    if (!group.empty()) {
      const int64_t left = group.ms_left();
      if (left <= 0 || group.full()) {
        MOMENTA_RETURN_IF_ERROR(group.Close());
        continue;
      }
      auto ready = in.WaitReady(left);
      if (!ready.ok()) return stop(ready.status());
      if (!*ready) {
        MOMENTA_RETURN_IF_ERROR(group.Close());
        continue;
      }
    }
    auto line = in.Next();  // blocks only while no group is open
    if (!line.ok()) return stop(line.status());
    if (!*line) break;  // the producer closed its end
    const int64_t time = options.time == kLogTimeNow ? WallClockMs() : options.time;
    auto update = ParseUpdateLine(**line, in.line_number(), in.name(), dtype, length, time);
    if (!update.ok()) {
      if (!options.skip_bad) return stop(update.status());
      std::fprintf(stderr, "momenta: %s (skipped)\n", update.status().ToString().c_str());
      ++st.skipped;
      continue;
    }
    if (*update) group.Add(**update);
  }
  return group.Close();
}

}  // namespace momenta::cli
