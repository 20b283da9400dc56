#include "stream/net/root_answer.h"

#include "storage/util/json_writer.h"

namespace momenta {

namespace {

using Kind = Query::Kind;

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += names[i];
  }
  return out;
}

// A clock or a quantile value, or "none" (no clock yet, no data).
std::string TextOrNone(const std::optional<int64_t>& t) { return t ? std::to_string(*t) : "none"; }

// An item as answers write it: its name when it has one, else the integer.
std::string ItemText(int64_t item, const std::string& name) { return name.empty() ? std::to_string(item) : name; }

// The name of a.items[i] ("" when none: an answer built without names).
const std::string& NameAt(const RootAnswer& a, size_t i) {
  static const std::string kNone;
  return i < a.names.size() ? a.names[i] : kNone;
}

void JsonItem(JsonWriter& j, int64_t item, const std::string& name) {
  if (name.empty())
    j.Int(item);
  else
    j.String(name);
}

// "as_of=T sites=C/N[ not_covered=a,b]"
std::string TextCoverage(const AnswerCoverage& c) {
  std::string h =
      "as_of=" + TextOrNone(c.as_of) + " sites=" + std::to_string(c.covered.size()) + "/" + std::to_string(c.slots);
  if (!c.uncovered.empty()) h += " not_covered=" + Join(c.uncovered);
  return h;
}

// "<p>frames=F <p>bytes=B <p>messages=M <p>words=W"
std::string TextCounts(const TrafficCounts& c, const std::string& p) {
  return p + "frames=" + std::to_string(c.frames) + " " + p + "bytes=" + std::to_string(c.bytes) + " " + p +
         "messages=" + std::to_string(c.messages) + " " + p + "words=" + std::to_string(c.words);
}

std::string TextSiteRow(const SiteRow& s, bool stats) {
  std::string row = "\n" + s.name + " " + SlotStateName(s.state) + " clock=" + TextOrNone(s.clock);
  if (stats) return row + " " + TextCounts(s.window, "window_") + " " + TextCounts(s.total, "");
  row += " peer=" + s.peer + " connects=" + std::to_string(s.connects) + " resyncs=" + std::to_string(s.resyncs) +
         " count=" + TextNumber(s.count);
  if (s.last_time) row += " last_time=" + TextOrNone(*s.last_time > -kMaxTime ? s.last_time : std::nullopt);
  if (s.held) row += " held=" + std::to_string(s.held);
  if (s.state == SiteSlot::State::kStale) {
    if (!s.last_close.empty()) row += " closed: " + s.last_close;
  } else if (!s.not_covered.empty()) {
    row += " not_covered: " + s.not_covered;
  }
  return row;
}

// Appended piece by piece, not with operator+ chains (GCC 12's -Wrestrict
// misfires on "literal" + a temporary string).
std::string RenderText(const RootAnswer& a) {
  std::string out = TextCoverage(a.coverage);
  switch (a.kind) {
    case Kind::kCount:
      return out.append(" count=").append(TextNumber(a.count));
    case Kind::kItem:
      return out.append(" item=").append(ItemText(a.item, a.item_name)).append(" count=").append(TextNumber(a.count));
    case Kind::kQuantile:
      return out.append(" phi=").append(TextNumber(a.phi)).append(" value=").append(TextOrNone(a.value));
    case Kind::kFrequent:
    case Kind::kItems:
      out.append(" count=").append(TextNumber(a.count));
      if (a.kind == Kind::kFrequent) out.append(" phi=").append(TextNumber(a.phi));
      out.append(" items=").append(std::to_string(a.items.size()));
      for (size_t i = 0; i < a.items.size(); ++i)
        out.append("\n")
            .append(ItemText(a.items[i].item, NameAt(a, i)))
            .append(" ")
            .append(TextNumber(a.items[i].count));
      return out;
    case Kind::kSites:
    case Kind::kStats: {
      const bool stats = a.kind == Kind::kStats;
      out.append(" ").append(a.params.ToString());
      if (stats) {
        out.append("\ntotal ").append(TextCounts(a.window, "window_")).append(" ").append(TextCounts(a.total, ""));
        out.append(" names=").append(std::to_string(a.names_held)).append(" name_collisions=");
        out.append(std::to_string(a.name_collisions));
      }
      for (const SiteRow& s : a.sites) out += TextSiteRow(s, stats);
      return out;
    }
    case Kind::kHelp:
    case Kind::kForget:
      break;
  }
  return out;
}

// A clock or a quantile value, or null.
void JsonOrNull(JsonWriter& j, const std::optional<int64_t>& t) {
  if (t)
    j.Int(*t);
  else
    j.Null();
}

void JsonNames(JsonWriter& j, const std::vector<std::string>& names) {
  j.BeginArray();
  for (const std::string& n : names) j.String(n);
  j.EndArray();
}

// "<p>frames":F,"<p>bytes":B,"<p>messages":M,"<p>words":W
void JsonCounts(JsonWriter& j, const TrafficCounts& c, const std::string& p) {
  j.Key(p + "frames").UInt(c.frames).Key(p + "bytes").UInt(c.bytes);
  j.Key(p + "messages").UInt(c.messages).Key(p + "words").UInt(c.words);
}

void JsonSiteRow(JsonWriter& j, const SiteRow& s, bool stats) {
  j.BeginObject().Key("name").String(s.name).Key("state").String(SlotStateName(s.state)).Key("clock");
  JsonOrNull(j, s.clock);
  if (stats) {
    JsonCounts(j, s.window, "window_");
    JsonCounts(j, s.total, "");
    JsonCounts(j, s.resync, "resync_");
  } else {
    j.Key("peer").String(s.peer).Key("connects").UInt(s.connects).Key("resyncs").UInt(s.resyncs);
    j.Key("count").Double(s.count).Key("last_close").String(s.last_close);
    j.Key("not_covered").String(s.not_covered).Key("held").UInt(s.held).Key("last_time");
    JsonOrNull(j, s.last_time && *s.last_time > -kMaxTime ? s.last_time : std::nullopt);
  }
  j.EndObject();
}

std::string RenderJson(const RootAnswer& a) {
  JsonWriter j;
  j.BeginObject().Key("as_of");
  JsonOrNull(j, a.coverage.as_of);
  j.Key("sites");
  JsonNames(j, a.coverage.covered);
  j.Key("uncovered");
  JsonNames(j, a.coverage.uncovered);
  switch (a.kind) {
    case Kind::kCount:
      j.Key("count").Double(a.count);
      break;
    case Kind::kItem:
      j.Key("item");
      JsonItem(j, a.item, a.item_name);
      j.Key("count").Double(a.count);
      break;
    case Kind::kQuantile:
      j.Key("phi").Double(a.phi).Key("value");
      JsonOrNull(j, a.value);
      break;
    case Kind::kFrequent:
    case Kind::kItems:
      j.Key("count").Double(a.count);
      if (a.kind == Kind::kFrequent) j.Key("phi").Double(a.phi);
      j.Key("items").BeginArray();
      for (size_t i = 0; i < a.items.size(); ++i) {
        j.BeginObject().Key("item");
        JsonItem(j, a.items[i].item, NameAt(a, i));
        j.Key("count").Double(a.items[i].count).EndObject();
      }
      j.EndArray();
      break;
    case Kind::kSites:
    case Kind::kStats: {
      const bool stats = a.kind == Kind::kStats;
      j.Key("window").Int(a.params.spec.window).Key("eps").Double(a.params.eps);
      if (stats) {
        j.Key("total").BeginObject();
        JsonCounts(j, a.window, "window_");
        JsonCounts(j, a.total, "");
        JsonCounts(j, a.resync, "resync_");
        j.Key("names").UInt(a.names_held).Key("name_collisions").UInt(a.name_collisions);
        j.EndObject();
      }
      j.Key("per_site").BeginArray();
      for (const SiteRow& s : a.sites) JsonSiteRow(j, s, stats);
      j.EndArray();
      break;
    }
    case Kind::kHelp:
    case Kind::kForget:
      break;
  }
  j.EndObject();
  return j.str();
}

std::vector<SiteRow> SiteRows(const RootState& st) {
  std::vector<SiteRow> rows;
  rows.reserve(st.slots().size());
  for (uint32_t i = 0; i < st.slots().size(); ++i) {
    const SiteSlot& s = st.slots()[i];
    if (!s.in_use) continue;
    SiteRow r;
    r.name = s.name;
    r.state = s.state;
    if (s.has_clock) r.clock = s.clock;
    r.peer = s.peer;
    r.last_close = s.last_close;
    r.connects = s.connects;
    r.resyncs = s.resyncs;
    r.count = s.in_root ? st.SiteCount(i) : 0;
    r.not_covered = st.Coverage(i);
    if (s.state == SiteSlot::State::kFinished) r.last_time = s.last_time;
    r.held = s.held.size();
    r.window = s.wire.window();
    r.total = s.wire.total();
    r.resync = s.wire.snapshots();
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

RootAnswer ComputeAnswer(RootState& st, const Query& q) {
  RootAnswer a;
  a.kind = q.kind;
  a.coverage = {st.AsOf(), st.Covered(), st.Uncovered(), st.sites()};
  a.item = q.item;
  a.phi = q.phi;
  switch (q.kind) {
    case Kind::kCount:
      a.count = st.Count();
      break;
    case Kind::kItem:
      a.count = st.ItemCount(q.item);
      a.item_name = q.item_name.empty() ? st.names().NameOf(q.item) : q.item_name;
      break;
    case Kind::kQuantile:
      a.value = st.Quantile(q.phi);
      break;
    case Kind::kFrequent:
    case Kind::kItems:
      a.items = q.kind == Kind::kItems ? st.Items() : st.Frequent(q.phi);
      for (const ItemEstimate& e : a.items) a.names.push_back(st.names().NameOf(e.item));
      a.count = st.Count();
      break;
    case Kind::kSites:
    case Kind::kStats:
      a.params = st.params();
      a.sites = SiteRows(st);
      a.names_held = st.names().size();
      a.name_collisions = st.names().collisions();
      for (const SiteRow& r : a.sites) {
        a.window += r.window;
        a.total += r.total;
        a.resync += r.resync;
      }
      break;
    case Kind::kHelp:
    case Kind::kForget:
      break;
  }
  return a;
}

std::string RenderAnswer(const RootAnswer& a, bool json) { return (json ? RenderJson(a) : RenderText(a)) + "\n\n"; }

std::string AnswerQuery(RootState& state, const Query& q) {
  if (q.kind == Kind::kHelp)
    return q.json
               ? ErrorAnswer("help is text only", true)
               : "queries: [at T [wait MS]] count | item J|NAME | frequent PHI | quantile PHI | items | sites | stats "
                 "[json]; forget SITE\n\n";
  if (q.kind == Kind::kForget) {
    if (Status st = state.Forget(q.site); !st.ok()) return ErrorAnswer(st.ToString(), q.json);
    if (q.json) return JsonWriter().BeginObject().Key("forgot").String(q.site).EndObject().str() + "\n\n";
    return "forgot " + q.site + "\n\n";
  }
  return RenderAnswer(ComputeAnswer(state, q), q.json);
}

std::string ErrorAnswer(std::string_view message, bool json) {
  if (json) return JsonWriter().BeginObject().Key("error").String(message).EndObject().str() + "\n\n";
  return "error: " + std::string(message) + "\n\n";
}

std::string AtTimeoutAnswer(const RootState& state, const Query& q) {
  std::vector<std::string> behind;
  for (const SiteSlot& s : state.slots())
    if (s.in_use && (s.state == SiteSlot::State::kSyncing ||
                     (s.state == SiteSlot::State::kLive && (!s.has_clock || s.clock < *q.at))))
      behind.push_back(s.name + "(" + SlotStateName(s.state) + (s.has_clock ? " at " + std::to_string(s.clock) : "") +
                       ")");
  return ErrorAnswer("timed out after " + std::to_string(q.wait_ms) + " ms waiting for time " + std::to_string(*q.at) +
                         "; behind: " + Join(behind),
                     q.json);
}

}  // namespace momenta
