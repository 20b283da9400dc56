// The root's query language: one line in, one answer out (root_answer.h),
// so that `nc` works as well as `momenta ask`.
//
//   [at T [wait MS]] count | item J|NAME | frequent PHI | quantile PHI | items
//                    | sites | stats | help     [json]
//   forget SITE      [json]
//
// An answer is text lines (or one JSON object with `json`) followed by an
// empty line. Every answer about the data states as_of (the time it is valid
// for) and the sites it covers. `at T` holds the answer until every site the
// root holds live has reached T and none is resynchronizing (the root's
// event loop parks it; after `wait` ms, 10 s by default, it answers with an
// error naming the sites still behind). Stale and finished sites do not hold
// it back. `forget SITE` drops a stale or finished site from the root (it is
// listed no more; a site of that name that connects later starts afresh).
// Errors read "error: <what>" ({"error": "..."} in JSON).
//
// `item` takes an integer J, or a name: a word that is not an integer (or
// any word after "name:", e.g. item name:42) is asked for as its hash
// (NameItem), the item sites counting names (--item name) count it as.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

struct Query {
  enum class Kind { kCount, kItem, kFrequent, kQuantile, kItems, kSites, kStats, kHelp, kForget };
  Kind kind = Kind::kCount;
  int64_t item = 0;
  std::string item_name;  // kItem asked by name ("" for an integer): item is its hash
  double phi = 0;
  std::string site;  // kForget
  std::optional<int64_t> at;
  int64_t wait_ms = 10000;
  bool json = false;
};

inline constexpr size_t kMaxQueryLine = 4096;

// InvalidArgument naming the problem ("frequent: PHI must lie in (eps/2, 1]").
Result<Query> ParseQuery(std::string_view line, double eps);
// A number as the query language writes it in text: 15 significant digits.
std::string TextNumber(double v);

}  // namespace momenta
