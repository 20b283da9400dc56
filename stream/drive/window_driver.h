// The window's two clocks (stream/window/window_spec.h), each a loop that
// reads a source into a Summarizer and hands it to `report` at each report
// time. Both end at the source's end or a stop; the reports so far stand.
//
//   auto s = Summarizer::Create({/*window=*/60000, /*tardiness=*/0}, 0.01);
//   TextSource in(0, "stdin", ItemMapping(), OneWord::kRefused, StopToken());
//   Status st = RunDataClock(in, *s, 0, [](const Summarizer& s) { Print(s.Report(10, {0.5})); }, StopToken());
#pragma once

#include <cstdint>
#include <functional>

#include "storage/util/status.h"
#include "storage/util/stop_token.h"
#include "stream/drive/item_source.h"
#include "stream/window/summarizer.h"

namespace momenta {

using ReportFn = std::function<void(const Summarizer&)>;

// The data's own clock: time is the largest timestamp seen. A tick is
// reported once an item stamped later arrives (or the input ends); with
// every > 0, the state at each multiple of `every` instead. Bare timestamps
// are not expected (the source's OneWord::kRefused). REQUIRES: every >= 0
Status RunDataClock(ItemSource& source, Summarizer& s, int64_t every, const ReportFn& report, StopToken stop);

// Live: the wall clock in ms; a report every `every` ms whether or not
// anything arrives (items leave the window as time passes), and one when it
// ends. Items stamped in the future count as stamped now. The source's end
// ends the loop only when `end_with_input` (text read to its end); otherwise
// (a log not followed) the loop goes on reporting until a stop.
// REQUIRES: every >= 1
Status RunWallClock(ItemSource& source, Summarizer& s, int64_t every, bool end_with_input, const ReportFn& report,
                    StopToken stop);

}  // namespace momenta
