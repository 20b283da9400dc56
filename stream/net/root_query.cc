#include "stream/net/root_query.h"

#include <cstdio>
#include <sstream>
#include <vector>

#include "storage/util/parse_number.h"
#include "stream/window/item_mapping.h"

namespace momenta {

namespace {
// The item of `item WORD`: an integer, else a name (after "name:" always).
bool ParseItemWord(const std::string& word, Query* q) {
  constexpr std::string_view kPrefix = "name:";
  if (!word.starts_with(kPrefix) && ParseInteger(word, &q->item)) return true;
  q->item_name = word.starts_with(kPrefix) ? word.substr(kPrefix.size()) : word;
  q->item = NameItem(q->item_name);
  return !q->item_name.empty();
}
}  // namespace

Result<Query> ParseQuery(std::string_view line, double eps) {
  std::vector<std::string> w;
  {
    std::istringstream in{std::string(line)};
    for (std::string t; in >> t;) w.push_back(t);
  }
  Query q;
  size_t i = 0;
  auto bad = [](const std::string& what) { return Status::InvalidArgument("query", what); };
  if (!w.empty() && w.back() == "json") {
    q.json = true;
    w.pop_back();
  }
  if (i < w.size() && w[i] == "at") {
    int64_t t = 0;
    if (i + 1 >= w.size() || !ParseInteger(w[i + 1], &t)) return bad("at: T must be an integer time");
    q.at = t;
    i += 2;
    if (i < w.size() && w[i] == "wait") {
      if (i + 1 >= w.size() || !ParseInteger(w[i + 1], &q.wait_ms) || q.wait_ms < 0)
        return bad("wait: MS must be a non-negative integer");
      i += 2;
    }
  }
  if (i >= w.size()) return bad("empty query (try 'help')");
  const std::string& verb = w[i];
  const size_t args = w.size() - i - 1;
  auto need = [&](size_t n) -> Status {
    if (args != n)
      return bad(verb + ": takes " + std::to_string(n) + " argument" + (n == 1 ? "" : "s") + ", got " +
                 std::to_string(args));
    return Status::OK();
  };
  if (verb == "count" || verb == "items" || verb == "sites" || verb == "stats" || verb == "help") {
    MOMENTA_RETURN_IF_ERROR(need(0));
    q.kind = verb == "count"   ? Query::Kind::kCount
             : verb == "items" ? Query::Kind::kItems
             : verb == "sites" ? Query::Kind::kSites
             : verb == "stats" ? Query::Kind::kStats
                               : Query::Kind::kHelp;
  } else if (verb == "item") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (!ParseItemWord(w[i + 1], &q)) return bad("item: 'name:' must be followed by a name");
    q.kind = Query::Kind::kItem;
  } else if (verb == "frequent") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (!ParseReal(w[i + 1], &q.phi) || !(q.phi > eps / 2 && q.phi <= 1))
      return bad("frequent: PHI must lie in (eps/2, 1] = (" + TextNumber(eps / 2) + ", 1], got '" + w[i + 1] + "'");
    q.kind = Query::Kind::kFrequent;
  } else if (verb == "quantile") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (!ParseReal(w[i + 1], &q.phi) || !(q.phi >= 0 && q.phi <= 1))
      return bad("quantile: PHI must lie in [0, 1], got '" + w[i + 1] + "'");
    q.kind = Query::Kind::kQuantile;
  } else if (verb == "forget") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (q.at) return bad("forget: takes no 'at'");
    q.site = w[i + 1];
    q.kind = Query::Kind::kForget;
  } else {
    return bad("unknown query '" + verb.substr(0, 64) + "' (try 'help')");
  }
  return q;
}

std::string TextNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace momenta
