#include "stream/net/root_query.h"

#include <charconv>
#include <cstdio>
#include <sstream>
#include <vector>

namespace momenta {

namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonNames(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += JsonString(names[i]);
  }
  return out + "]";
}

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i];
  }
  return out;
}

bool ParseInt(std::string_view t, int64_t* v) {
  auto r = std::from_chars(t.data(), t.data() + t.size(), *v);
  return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
}

bool ParseDouble(std::string_view t, double* v) {
  std::string s(t);
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// The header every data answer starts with: as_of and coverage.
std::string Header(const RootState& st, bool json) {
  const auto as_of = st.AsOf();
  const auto covered = st.Covered(), uncovered = st.Uncovered();
  if (json) {
    return "\"as_of\":" + (as_of ? std::to_string(*as_of) : std::string("null")) + ",\"sites\":" +
           JsonNames(covered) + ",\"uncovered\":" + JsonNames(uncovered);
  }
  std::string h = "as_of=" + (as_of ? std::to_string(*as_of) : std::string("none")) + " sites=" +
                  std::to_string(covered.size()) + "/" + std::to_string(st.slots().size());
  if (!uncovered.empty()) h += " not_covered=" + Join(uncovered);
  return h;
}

std::string Counts(const TrafficCounts& c, bool json, const char* prefix) {
  const std::string p = prefix;
  if (json)
    return "\"" + p + "frames\":" + std::to_string(c.frames) + ",\"" + p + "bytes\":" + std::to_string(c.bytes) +
           ",\"" + p + "messages\":" + std::to_string(c.messages) + ",\"" + p + "words\":" + std::to_string(c.words);
  return p + "frames=" + std::to_string(c.frames) + " " + p + "bytes=" + std::to_string(c.bytes) + " " + p +
         "messages=" + std::to_string(c.messages) + " " + p + "words=" + std::to_string(c.words);
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
    if (i + 1 >= w.size() || !ParseInt(w[i + 1], &t)) return bad("at: T must be an integer time");
    q.at = t;
    i += 2;
    if (i < w.size() && w[i] == "wait") {
      if (i + 1 >= w.size() || !ParseInt(w[i + 1], &q.wait_ms) || q.wait_ms < 0)
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
    q.kind = verb == "count" ? Query::Kind::kCount
             : verb == "items" ? Query::Kind::kItems
             : verb == "sites" ? Query::Kind::kSites
             : verb == "stats" ? Query::Kind::kStats
                               : Query::Kind::kHelp;
  } else if (verb == "item") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (!ParseInt(w[i + 1], &q.item)) return bad("item: J must be an integer, got '" + w[i + 1] + "'");
    q.kind = Query::Kind::kItem;
  } else if (verb == "frequent") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (!ParseDouble(w[i + 1], &q.phi) || !(q.phi > eps / 2 && q.phi <= 1))
      return bad("frequent: PHI must lie in (eps/2, 1] = (" + Num(eps / 2) + ", 1], got '" + w[i + 1] + "'");
    q.kind = Query::Kind::kFrequent;
  } else if (verb == "quantile") {
    MOMENTA_RETURN_IF_ERROR(need(1));
    if (!ParseDouble(w[i + 1], &q.phi) || !(q.phi >= 0 && q.phi <= 1))
      return bad("quantile: PHI must lie in [0, 1], got '" + w[i + 1] + "'");
    q.kind = Query::Kind::kQuantile;
  } else {
    return bad("unknown query '" + verb.substr(0, 64) + "' (try 'help')");
  }
  return q;
}

std::string ErrorAnswer(std::string_view message, bool json) {
  if (json) return "{\"error\":" + JsonString(message) + "}\n\n";
  return "error: " + std::string(message) + "\n\n";
}

std::string AtTimeoutAnswer(const RootState& state, const Query& q) {
  std::vector<std::string> behind;
  for (const SiteSlot& s : state.slots())
    if (s.state == SiteSlot::State::kSyncing || (s.state == SiteSlot::State::kLive && s.clock < *q.at))
      behind.push_back(s.name + "(" + SlotStateName(s.state) + (s.has_clock ? " at " + std::to_string(s.clock) : "") +
                       ")");
  return ErrorAnswer("timed out after " + std::to_string(q.wait_ms) + " ms waiting for time " + std::to_string(*q.at) +
                         "; behind: " + Join(behind),
                     q.json);
}

std::string AnswerQuery(RootState& st, const Query& q) {
  const bool j = q.json;
  std::string out;
  switch (q.kind) {
    case Query::Kind::kHelp:
      return j ? ErrorAnswer("help is text only", true)
               : "queries: [at T [wait MS]] count | item J | frequent PHI | quantile PHI | items | sites | stats "
                 "[json]\n\n";
    case Query::Kind::kCount:
      out = j ? "{" + Header(st, j) + ",\"count\":" + Num(st.Count()) + "}"
              : Header(st, j) + " count=" + Num(st.Count());
      break;
    case Query::Kind::kItem:
      out = j ? "{" + Header(st, j) + ",\"item\":" + std::to_string(q.item) + ",\"count\":" +
                    Num(st.ItemCount(q.item)) + "}"
              : Header(st, j) + " item=" + std::to_string(q.item) + " count=" + Num(st.ItemCount(q.item));
      break;
    case Query::Kind::kQuantile: {
      const auto v = st.Quantile(q.phi);
      const std::string value = v ? std::to_string(*v) : (j ? "null" : "none");
      out = j ? "{" + Header(st, j) + ",\"phi\":" + Num(q.phi) + ",\"value\":" + value + "}"
              : Header(st, j) + " phi=" + Num(q.phi) + " value=" + value;
      break;
    }
    case Query::Kind::kFrequent:
    case Query::Kind::kItems: {
      const auto items = q.kind == Query::Kind::kItems ? st.Items() : st.Frequent(q.phi);
      if (j) {
        out = "{" + Header(st, j) + ",\"count\":" + Num(st.Count());
        if (q.kind == Query::Kind::kFrequent) out += ",\"phi\":" + Num(q.phi);
        out += ",\"items\":[";
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += ',';
          out += "{\"item\":" + std::to_string(items[i].item) + ",\"count\":" + Num(items[i].count) + "}";
        }
        out += "]}";
      } else {
        out = Header(st, j) + " count=" + Num(st.Count());
        if (q.kind == Query::Kind::kFrequent) out += " phi=" + Num(q.phi);
        out += " items=" + std::to_string(items.size());
        for (const ItemEstimate& e : items) out += "\n" + std::to_string(e.item) + " " + Num(e.count);
      }
      break;
    }
    case Query::Kind::kSites:
    case Query::Kind::kStats: {
      const bool stats = q.kind == Query::Kind::kStats;
      TrafficCounts total, window, snaps;
      std::string rows;
      for (uint32_t i = 0; i < st.slots().size(); ++i) {
        const SiteSlot& s = st.slots()[i];
        total += s.wire.total();
        window += s.wire.window();
        snaps += s.wire.snapshots();
        const std::string clock = s.has_clock ? std::to_string(s.clock) : (j ? "null" : "none");
        if (j) {
          if (i) rows += ',';
          rows += "{\"name\":" + JsonString(s.name) + ",\"state\":\"" +
                  SlotStateName(s.state) + "\",\"clock\":" + clock;
          if (stats) {
            rows += "," + Counts(s.wire.window(), j, "window_") + "," + Counts(s.wire.total(), j, "") + "," +
                    Counts(s.wire.snapshots(), j, "resync_");
          } else {
            rows += ",\"peer\":" + JsonString(s.peer) + ",\"connects\":" + std::to_string(s.connects) +
                    ",\"resyncs\":" + std::to_string(s.resyncs) + ",\"count\":" +
                    Num(s.state == SiteSlot::State::kLive ? st.SiteCount(i) : 0) + ",\"last_close\":" +
                    JsonString(s.last_close);
          }
          rows += "}";
        } else {
          rows += "\n" + s.name + " " + SlotStateName(s.state) + " clock=" + clock;
          if (stats) {
            rows += " " + Counts(s.wire.window(), j, "window_") + " " + Counts(s.wire.total(), j, "");
          } else {
            rows += " peer=" + s.peer + " connects=" + std::to_string(s.connects) + " resyncs=" +
                    std::to_string(s.resyncs) +
                    " count=" + Num(s.state == SiteSlot::State::kLive ? st.SiteCount(i) : 0);
            if (!s.last_close.empty() && s.state == SiteSlot::State::kStale) rows += " closed: " + s.last_close;
          }
        }
      }
      if (j) {
        out = "{" + Header(st, j) + ",\"window\":" + std::to_string(st.params().spec.window) + ",\"eps\":" +
              Num(st.params().eps);
        if (stats) out += ",\"total\":{" + Counts(window, j, "window_") + "," + Counts(total, j, "") + "," +
                          Counts(snaps, j, "resync_") + "}";
        out += ",\"per_site\":[" + rows + "]}";
      } else {
        out = Header(st, j) + " " + st.params().ToString();
        if (stats) out += "\ntotal " + Counts(window, j, "window_") + " " + Counts(total, j, "");
        out += rows;
      }
      break;
    }
  }
  return out + "\n\n";
}

}  // namespace momenta
