// Where the monitor's items come from: an ItemSource gives (timestamp, item)
// pairs one at a time, or a bare timestamp (the clock moves on). The two
// sources: an array's update log (log_source.h) and "TIMESTAMP ITEM" text
// (text_source.h). The window's loops (window_driver.h) and the site's loop
// (site_runner.h) read any of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

// The wall clock, ms since the epoch: what "now" stamps on a live input.
int64_t WallMillis();

// Where a driver sends a notice for a person (damage skipped in a log, where
// a site starts on a long log); empty: dropped.
using NoticeFn = std::function<void(const std::string&)>;

// One thing read: an item stamped `ts`, or (has_item false) a bare timestamp.
struct TimedItem {
  int64_t ts = 0;
  int64_t item = 0;
  bool has_item = true;
  std::string_view name;  // the ITEM text under a "name" mapping (valid until the next Next), else empty
};

class ItemSource {
 public:
  enum class Got { kItem, kNothing, kEnd };
  virtual ~ItemSource() = default;
  // kItem: *out is the next item (or bare timestamp). kNothing: none within
  // `wait` (wait < 0: as long as it takes), or a stop came; ask again.
  // kEnd: the source is over. Errors name the input ("in.txt:3: ...").
  virtual Result<Got> Next(TimedItem* out, std::chrono::milliseconds wait) = 0;
};

// A source that shows every item it passes on to `note` first (e.g. to keep
// the names of items counted by their hash: NameTable, SiteNames).
class NotingSource : public ItemSource {
 public:
  NotingSource(std::unique_ptr<ItemSource> in, std::function<void(const TimedItem&)> note)
      : in_(std::move(in)), note_(std::move(note)) {}
  Result<Got> Next(TimedItem* out, std::chrono::milliseconds wait) override {
    auto got = in_->Next(out, wait);
    if (got.ok() && *got == Got::kItem && out->has_item) note_(*out);
    return got;
  }

 private:
  std::unique_ptr<ItemSource> in_;
  const std::function<void(const TimedItem&)> note_;
};

}  // namespace momenta
