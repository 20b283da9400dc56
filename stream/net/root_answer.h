// The root's answers to its queries (root_query.h), computed apart from how
// they are written: ComputeAnswer takes what the root's state says now into
// a RootAnswer, RenderAnswer writes it as text lines or as one JSON object
// (storage/util/json_writer.h), followed by the empty line that ends an answer.
//
// Text: "as_of=T sites=C/N[ not_covered=a,b] <what>", numbers with 15
// significant digits; `sites` says per site why it is not covered. JSON:
// {"as_of":T|null,"sites":[...],"uncovered":[...], <what>}, every number exact (shortest round trip). An item a site
// sent a name for (NAMES, root_names.h) is written as its name (a JSON string), any other as its integer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stream/net/root_query.h"
#include "stream/net/root_state.h"

namespace momenta {

// The sites an answer covers, and the time it holds for (RootState::AsOf).
struct AnswerCoverage {
  std::optional<int64_t> as_of;
  std::vector<std::string> covered, uncovered;
  size_t slots = 0;  // sites the root knows
};

// One site's row in `sites` and `stats`.
struct SiteRow {
  std::string name;
  SiteSlot::State state = SiteSlot::State::kSyncing;
  std::optional<int64_t> clock;
  std::string peer, last_close;
  uint64_t connects = 0, resyncs = 0;
  double count = 0;                     // the site's count in the answers: 0 unless covered
  std::string not_covered;              // why the answers leave it out ("" when covered)
  std::optional<int64_t> last_time;     // finished: when its input ended
  size_t held = 0;                      // messages held past as_of
  TrafficCounts window, total, resync;  // what crossed the wire (WireMeter)
};

struct RootAnswer {
  Query::Kind kind = Query::Kind::kCount;
  AnswerCoverage coverage;
  double count = 0;                     // count, frequent, items: the window's; item: the item's
  int64_t item = 0;                     // item
  std::string item_name;                // item: its name, when asked by name or a site sent it
  double phi = 0;                       // frequent, quantile
  std::optional<int64_t> value;         // quantile (none with no data)
  std::vector<ItemEstimate> items;      // frequent, items
  std::vector<std::string> names;       // frequent, items: each item's name ("": none, an integer item)
  MonitorParams params;                 // sites, stats
  std::vector<SiteRow> sites;           // sites, stats
  TrafficCounts window, total, resync;  // stats: the sums of the rows
  size_t names_held = 0;                // stats: names held (root_names.h)
  uint64_t name_collisions = 0;         // stats: names that came with the hash of another
};

// What the root's state answers to q now. REQUIRES: q.kind != kHelp
RootAnswer ComputeAnswer(RootState& state, const Query& q);
std::string RenderAnswer(const RootAnswer& a, bool json);

// The answer to q as the root's state stands now: RenderAnswer of
// ComputeAnswer, or the help text.
std::string AnswerQuery(RootState& state, const Query& q);
// "error: <message>\n\n", or {"error":"<message>"}.
std::string ErrorAnswer(std::string_view message, bool json);
// Why an `at` query gave up: the sites not yet at its time.
std::string AtTimeoutAnswer(const RootState& state, const Query& q);

}  // namespace momenta
