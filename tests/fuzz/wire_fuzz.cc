// Fuzz target `wire`: what a root (and a site) decodes from a peer, in
// memory: frame splitting (FrameReader), the handshake (HELLO, WELCOME,
// REJECT), BATCH / SNAPSHOT payloads and every message kind, the root's
// intake of a site's frames into its state (root_intake.h, root_state.h),
// and the query lines of a peer that is not a site (root_query.h).
//
// Input: one byte seeding how the stream is cut into reads (and whether the
// root asks for a token), then the bytes one connection sends the root (the
// first 1024).
// As RootServer does, a first byte 0xB5 makes the peer a site, anything
// else a query peer. Properties checked:
//   - splitting: the frames and the final error are the same whether the
//     bytes come at once or in reads of 1..64 bytes; each frame re-encodes
//     (EncodeFrame) to exactly the bytes it came from; while waiting for
//     more, the reader holds less than a header plus the payload cap;
//   - every payload that decodes as HELLO, WELCOME, REJECT, BATCH or NAMES
//     re-encodes to bytes that decode to the same value; a batch's messages
//     keep the bounds DecodeBatch and DecodeMessage promise (ticks <= the
//     clock, levels <= 2^32, a summary's values ascending and ranks
//     nondecreasing and <= n), and each message re-encodes to itself;
//   - the root's state: after every frame it takes, the count is the
//     site's; after the last, the items listed sorted, each with its
//     ItemCount, Frequent a subset of them, as_of at most each covered
//     site's clock; every query answer ends
//     with an empty line; and the site's mirror (SiteMirror::Snapshot), sent
//     as a SNAPSHOT to a fresh root, rebuilds the same answers (count, item
//     counts, quantiles): a resync restores exactly what the stream built;
//   - the root's names (NAMES frames, root_names.h): after a prune, a name
//     only for an item the site holds or named since its last state frame,
//     and none the site did not send;
//   - query lines: a parsed query's phi lies in its range, and the answer
//     (against a root holding one live site) ends with an empty line.
// Seeds (tests/data/fuzz/wire/): written by this target when the
// environment variable MOMENTA_WRITE_FUZZ_SEEDS names a folder (run
// fuzz_replay_wire on any input with it set): a site's handshake, snapshot
// and batches from a real Site (stream/protocol/site.h), a token handshake, WELCOME
// and REJECT frames, and query lines.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "stream/net/handshake.h"
#include "stream/net/name_frames.h"
#include "stream/net/root_answer.h"
#include "stream/net/root_intake.h"
#include "stream/net/root_state.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_frame.h"
#include "stream/protocol/messages.h"
#include "stream/protocol/site.h"
#include "stream/protocol/site_mirror.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace momenta;

constexpr uint32_t kCap = 1u << 16;  // payload cap of the readers here (the root's is a parameter)
const char kToken[] = "tok";

MonitorParams Params() {
  MonitorParams p;
  p.eps = 0.1;
  p.spec = WindowSpec{1000, 10};
  return p;
}

// ---- frame splitting ------------------------------------------------------

struct Split {
  std::vector<Frame> frames;
  std::string error;  // empty when the bytes ended cleanly (perhaps mid-frame)
};

Split SplitAtOnce(std::string_view bytes) {
  Split s;
  FrameReader r("peer", kCap);
  r.Append(bytes.data(), bytes.size());
  while (true) {
    Frame f;
    auto more = r.Next(&f);
    if (!more.ok()) {
      s.error = more.status().ToString();
      break;
    }
    if (!*more) break;
    // The frame is the last bytes the reader consumed (duplicates it dropped
    // come before it): they re-encode exactly, sequence included.
    const size_t consumed = bytes.size() - r.buffered();
    const std::string again = EncodeFrame(f.type, f.payload, f.sequence);
    FUZZ_CHECK(consumed >= again.size() && bytes.substr(consumed - again.size(), again.size()) == again,
               "frame does not re-encode to its bytes");
    FUZZ_CHECK(f.sequence == s.frames.size(), "frames delivered out of sequence");
    s.frames.push_back(std::move(f));
  }
  return s;
}

Split SplitInReads(std::string_view bytes, uint8_t seed) {
  Split s;
  FrameReader r("peer", kCap);
  uint32_t x = seed * 2654435761u + 1;
  size_t at = 0;
  while (s.error.empty()) {
    x = x * 1103515245u + 12345u;
    const size_t n = std::min<size_t>(bytes.size() - at, 1 + (x >> 16) % 64);
    r.Append(bytes.data() + at, n);
    at += n;
    while (true) {
      Frame f;
      auto more = r.Next(&f);
      if (!more.ok()) {
        s.error = more.status().ToString();
        break;
      }
      if (!*more) break;
      s.frames.push_back(std::move(f));
    }
    if (s.error.empty())
      FUZZ_CHECK(r.buffered() < kFrameHeaderBytes + kCap, "reader holds more than a header and a capped payload");
    if (at == bytes.size()) break;
  }
  return s;
}

// ---- payload decoders -------------------------------------------------------

void CheckMessage(const Message& m, int64_t clock) {
  FUZZ_CHECK(m.tick <= clock, "message stamped after its frame's clock");
  if (m.type == MessageType::kBcDelta) FUZZ_CHECK(m.delta != 0, "zero level delta");
  if (m.type == MessageType::kQLevel) FUZZ_CHECK(m.count <= (uint64_t{1} << 32), "level above 1");
  if (m.type == MessageType::kQSummary) {
    for (size_t k = 0; k < m.pairs.size(); ++k) {
      FUZZ_CHECK(m.pairs[k].rank <= m.count, "summary rank above n");
      if (k > 0) {
        FUZZ_CHECK(m.pairs[k - 1].value < m.pairs[k].value, "summary values not ascending");
        FUZZ_CHECK(m.pairs[k - 1].rank <= m.pairs[k].rank, "summary ranks decreasing");
      }
    }
  } else {
    FUZZ_CHECK(m.pairs.empty(), "pairs on a message that carries none");
  }
  const std::string bytes = EncodeMessage(m);
  auto again = DecodeMessage(bytes);
  FUZZ_CHECK(again.ok(), again.status().ToString().c_str());
  FUZZ_CHECK(*again == m, "message round trip");
  FUZZ_CHECK(MessageWords(m) >= 1 && MessageBits(m) >= 1, "a message that costs nothing");
}

void CheckPayloadDecoders(const std::string& payload) {
  if (auto h = DecodeHello(payload); h.ok()) {
    auto again = DecodeHello(EncodeHello(*h));
    FUZZ_CHECK(again.ok(), again.status().ToString().c_str());
    FUZZ_CHECK(again->name == h->name && again->token == h->token && again->params == h->params &&
                   again->version == h->version,
               "hello round trip");
    FUZZ_CHECK(h->name.size() <= kMaxHandshakeString && h->token.size() <= kMaxHandshakeString, "long string");
  }
  if (auto w = DecodeWelcome(payload); w.ok()) {
    auto again = DecodeWelcome(EncodeWelcome(*w));
    FUZZ_CHECK(again.ok(), again.status().ToString().c_str());
    FUZZ_CHECK(again->params == w->params && again->slot == w->slot && again->root_id == w->root_id,
               "welcome round trip");
    FUZZ_CHECK(w->params.eps > 0 && w->params.eps < 1 && ValidateWindowSpec(w->params.spec).ok(),
               "welcome with parameters out of range");
  }
  if (auto r = DecodeReject(payload); r.ok()) {
    auto again = DecodeReject(EncodeReject(r->reason, r->final));
    FUZZ_CHECK(again.ok() && again->reason == r->reason && again->final == r->final, "reject round trip");
  }
  if (auto b = DecodeBatch(payload); b.ok()) {
    FUZZ_CHECK(b->clock >= -kMaxTime && b->clock <= kMaxTime, "batch clock out of range");
    for (const Message& m : b->messages) CheckMessage(m, b->clock);
    auto again = DecodeBatch(EncodeBatch(b->clock, b->messages));
    FUZZ_CHECK(again.ok(), again.status().ToString().c_str());
    FUZZ_CHECK(again->clock == b->clock && again->messages == b->messages, "batch round trip");
  }
  if (auto n = DecodeNames(payload); n.ok()) {
    FUZZ_CHECK(!n->empty() && n->size() <= kMaxNamesPerFrame, "names: a count out of range");
    for (const ItemName& e : *n) FUZZ_CHECK(!e.name.empty() && e.name.size() <= kMaxWireName, "a name out of range");
    auto again = DecodeNames(EncodeNames(*n));
    FUZZ_CHECK(again.ok() && *again == *n, "names round trip");
  }
}

// The root's names after a prune: only items a site holds, or named since
// its last state frame (`recent`), each with the name a NAMES frame gave.
void CheckNames(RootState& st, uint32_t slot, const std::set<int64_t>& recent, const std::set<int64_t>& named) {
  st.names().Prune(st);
  std::set<int64_t> held;
  st.slots()[slot].mirror->ForEachItem([&](int64_t item) { held.insert(item); });
  st.slots()[slot].applied->ForEachItem([&](int64_t item) { held.insert(item); });
  size_t kept = 0;
  for (int64_t item : named) {
    if (st.names().NameOf(item).empty()) continue;
    ++kept;
    FUZZ_CHECK(held.count(item) || recent.count(item), "a name kept for an item no site holds");
  }
  FUZZ_CHECK(kept == st.names().size(), "a name the site never sent");
}

// ---- the root's state -------------------------------------------------------

void CheckAnswer(const std::string& answer) {
  FUZZ_CHECK(answer.size() >= 2 && answer.compare(answer.size() - 2, 2, "\n\n") == 0,
             "an answer that does not end with an empty line");
}

void CheckState(RootState& st, uint32_t slot) {
  FUZZ_CHECK(st.Count() == st.SiteCount(slot), "count differs from the one site's");
  FUZZ_CHECK(st.Count() >= 0, "negative count");
  const auto items = st.Items();
  for (size_t k = 0; k < items.size(); ++k) {
    FUZZ_CHECK(items[k].count > 0, "an item listed with no count");
    FUZZ_CHECK(st.ItemCount(items[k].item) == items[k].count, "listed count differs from ItemCount");
    if (k > 0)
      FUZZ_CHECK(items[k - 1].count > items[k].count ||
                     (items[k - 1].count == items[k].count && items[k - 1].item < items[k].item),
                 "items not sorted");
  }
  for (const ItemEstimate& e : st.Frequent(0.5))
    FUZZ_CHECK(st.ItemCount(e.item) == e.count && e.count > 0, "a frequent item that is no item");
  if (auto as_of = st.AsOf())
    for (const SiteSlot& s : st.slots())
      if (s.in_root && s.state == SiteSlot::State::kLive)
        FUZZ_CHECK(s.has_clock && s.base <= *as_of && *as_of <= s.clock, "covered, yet as_of outside its times");
}

struct Answers {
  double count = 0;
  std::vector<ItemEstimate> items;
  std::optional<int64_t> q0, q50, q100;
  bool operator==(const Answers&) const = default;
};

Answers AnswersOf(RootState& st) {
  return {st.Count(), st.Items(), st.Quantile(0.0), st.Quantile(0.5), st.Quantile(1.0)};
}

// A few answers from a state (parsed once: the answers are what is checked).
void CheckQueries(RootState& st) {
  static const std::vector<Query> queries = [] {
    std::vector<Query> out;
    for (const char* line : {"items json", "quantile 0.5", "stats json"}) {
      auto q = ParseQuery(line, Params().eps);
      FUZZ_CHECK(q.ok(), q.status().ToString().c_str());
      out.push_back(*q);
    }
    return out;
  }();
  for (const Query& q : queries) CheckAnswer(AnswerQuery(st, q));
}

// The stream of a site connection, taken as the root takes it.
void FeedRoot(const std::vector<Frame>& frames, bool with_token) {
  RootState st(Params(), 4);
  const std::string token = with_token ? kToken : "";
  std::optional<uint32_t> slot;
  bool synced = false;
  std::set<int64_t> recent, named;  // items named since the last state frame; ever
  for (const Frame& f : frames) {
    const uint64_t bytes = kFrameHeaderBytes + f.payload.size();
    if (!slot) {
      Hello hello;
      if (bool final = false; !AdmitHello(f, st.params(), token, &hello, &final).empty()) return;  // REJECT, closed
      FUZZ_CHECK(CheckSiteName(hello.name).ok(), "admitted a bad site name");
      FUZZ_CHECK(token.empty() || hello.token == token, "admitted a wrong token");
      auto s = st.Attach(hello.name, "peer");
      FUZZ_CHECK(s.ok(), s.status().ToString().c_str());
      slot = *s;
      continue;
    }
    if (!TakeSiteFrame(st, *slot, &synced, f, bytes).empty()) break;  // REJECT, closed
    FUZZ_CHECK(st.Count() == st.SiteCount(*slot), "count differs from the one site's");
    if (f.type != FrameType::kNames) {
      recent.clear();
    } else if (auto n = DecodeNames(f.payload); n.ok()) {
      for (const ItemName& e : *n) recent.insert(e.item), named.insert(e.item);
    }
  }
  if (!slot) return;
  CheckNames(st, *slot, recent, named);
  CheckState(st, *slot);
  CheckQueries(st);
  if (!synced) return;
  // A resync from the site's mirror rebuilds what the stream built.
  const SiteSlot& s = st.slots()[*slot];
  Batch resync;
  resync.clock = s.clock;
  resync.messages = s.mirror->Snapshot(s.clock);
  RootState fresh(Params(), 4);
  auto other = fresh.Attach(s.name, "peer");
  FUZZ_CHECK(other.ok(), other.status().ToString().c_str());
  const Status applied = fresh.ApplySnapshot(*other, resync, 0);
  FUZZ_CHECK(applied.ok(), applied.ToString().c_str());
  FUZZ_CHECK(AnswersOf(fresh) == AnswersOf(st), "a resync from the mirror answers differently");
}

// One live site with a few items: what query lines are answered against.
RootState& QueryRoot() {
  static RootState* st = [] {
    auto* r = new RootState(Params(), 4);
    auto attached = r->Attach("a", "peer");
    FUZZ_CHECK(attached.ok(), attached.status().ToString().c_str());
    const uint32_t slot = attached.value();
    std::vector<Message> msgs;
    Message m;
    m.type = MessageType::kBcDelta;
    m.delta = 3;
    msgs.push_back(m);
    m = {};
    m.type = MessageType::kAcSet;
    m.item = 7;
    m.count = 10;
    msgs.push_back(m);
    m = {};
    m.type = MessageType::kQCount;
    m.count = 4;
    msgs.push_back(m);
    m = {};
    m.type = MessageType::kQLevel;
    m.item = 2;
    m.count = uint64_t{1} << 31;
    msgs.push_back(m);
    Status ok = r->ApplySnapshot(slot, Batch{5, msgs}, 0);
    FUZZ_CHECK(ok.ok(), ok.ToString().c_str());
    return r;
  }();
  return *st;
}

void FeedQueries(std::string_view bytes) {
  const double eps = Params().eps;
  size_t start = 0;
  while (start < bytes.size()) {
    size_t nl = bytes.find('\n', start);
    if (nl == std::string_view::npos) return;  // an incomplete line waits
    std::string_view line = bytes.substr(start, nl - start);
    start = nl + 1;
    if (line.size() > kMaxQueryLine) return;  // the root closes the connection
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto q = ParseQuery(line, eps);
    if (!q.ok()) {
      CheckAnswer(ErrorAnswer(q.status().ToString(), false));
      continue;
    }
    if (q->kind == Query::Kind::kFrequent) FUZZ_CHECK(q->phi > eps / 2 && q->phi <= 1, "frequent phi out of range");
    if (q->kind == Query::Kind::kQuantile) FUZZ_CHECK(q->phi >= 0 && q->phi <= 1, "quantile phi out of range");
    FUZZ_CHECK(q->wait_ms >= 0, "negative wait");
    CheckAnswer(AnswerQuery(QueryRoot(), *q));
    if (q->at) CheckAnswer(AtTimeoutAnswer(QueryRoot(), *q));
  }
}

// ---- seeds ------------------------------------------------------------------

void WriteSeed(const std::string& dir, const std::string& name, uint8_t seed, const std::string& bytes) {
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.put(static_cast<char>(seed));
  out << bytes;
}

void WriteSeeds(const std::string& dir) {
  const MonitorParams p = Params();
  SiteOptions so;
  so.spec = p.spec;
  so.eps = p.eps;
  so.quantile_summary = true;
  auto site = Site::Create(0, so);
  SiteMirror mirror(SIZE_MAX);
  std::vector<std::string> batches;
  for (int64_t t = 0; t < 40; ++t) {
    std::vector<Arrival> arrivals;
    for (int j = 0; j < 1 + t % 4; ++j) arrivals.push_back({t, (t * 7 + j * 3) % 5});
    std::vector<Message> out;
    (*site)->Tick(t, arrivals, &out);
    for (const Message& m : out) {
      Status st = mirror.Apply(m);
      FUZZ_CHECK(st.ok(), st.ToString().c_str());
    }
    if (t >= 30) batches.push_back(EncodeBatch(t, out));
  }
  Hello fresh;
  fresh.name = "site-1";
  Hello running = fresh;
  running.params = p;
  {  // one connection: HELLO, an empty SNAPSHOT, then batches (sequences 0, 1, ...)
    FrameWriter out;
    std::string stream = out.Encode(FrameType::kHello, EncodeHello(fresh));
    stream += out.Encode(FrameType::kSnapshot, EncodeBatch(-kMaxTime, {}));
    for (const std::string& b : batches) stream += out.Encode(FrameType::kBatch, b);
    WriteSeed(dir, "seed-site_stream", 0, stream);
  }
  {  // a site reconnecting with its parameters: HELLO, its state, a batch
    FrameWriter out;
    std::string stream = out.Encode(FrameType::kHello, EncodeHello(running));
    stream += out.Encode(FrameType::kSnapshot, EncodeBatch(29, mirror.Snapshot(29)));
    stream += out.Encode(FrameType::kBatch, batches[0]);
    WriteSeed(dir, "seed-resync", 16, stream);
  }
  {
    Hello with_token = fresh;
    with_token.token = kToken;
    FrameWriter out;
    std::string stream = out.Encode(FrameType::kHello, EncodeHello(with_token));
    stream += out.Encode(FrameType::kSnapshot, EncodeBatch(29, mirror.Snapshot(29)));
    WriteSeed(dir, "seed-token", 1, stream);
  }
  {  // what a root sends: WELCOME, then a REJECT
    Welcome w;
    w.params = p;
    w.slot = 3;
    w.root_id = 0x1234567890abcdefull;
    FrameWriter out;
    std::string stream = out.Encode(FrameType::kWelcome, EncodeWelcome(w));
    stream += out.Encode(FrameType::kReject, EncodeReject("wrong token", true));
    WriteSeed(dir, "seed-welcome_reject", 2, stream);
  }
  {  // a protocol-4 site counting names: NAMES before the frames turning items on
    Hello named = running;
    named.version = 4;
    std::vector<ItemName> names;
    for (int64_t item = 0; item < 5; ++item) names.push_back({item, "pkg-" + std::to_string(item)});
    FrameWriter out;
    std::string stream = out.Encode(FrameType::kHello, EncodeHello(named));
    stream += out.Encode(FrameType::kNames, EncodeNames(names));
    stream += out.Encode(FrameType::kSnapshot, EncodeBatch(29, mirror.Snapshot(29)));
    stream += out.Encode(FrameType::kNames, EncodeNames({names[2]}));
    stream += out.Encode(FrameType::kBatch, batches[0]);
    WriteSeed(dir, "seed-names", 0, stream);
  }
  WriteSeed(dir, "seed-name_queries", 0, "item libc6:amd64\nitem name:7 json\nat 5 item name:\nfrequent 0.5 json\n");
  WriteSeed(dir, "seed-queries", 0,
            "count\nitem 7\nitems json\nfrequent 0.5\nquantile 0.5 json\nat 5 wait 0 count\nsites\nstats\nhelp\n");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("MOMENTA_WRITE_FUZZ_SEEDS"); dir != nullptr && *dir != 0) {
    WriteSeeds(dir);
    std::fprintf(stderr, "wire: seeds written to %s\n", dir);
    std::exit(0);
  }
  return 0;
}

// A handshake, a snapshot and some batches fit in this; longer streams
// repeat what shorter ones reach and only slow the target down.
constexpr size_t kMaxInput = 1024;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size = std::min(size, kMaxInput + 1);
  const uint8_t seed = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (bytes.empty()) return 0;
  if (static_cast<uint8_t>(bytes[0]) != kWireMagic0) {
    FeedQueries(bytes);
    return 0;
  }
  const Split whole = SplitAtOnce(bytes);
  const Split reads = SplitInReads(bytes, seed);
  FUZZ_CHECK(whole.frames.size() == reads.frames.size(), "frames differ with how the bytes arrive");
  for (size_t k = 0; k < whole.frames.size(); ++k)
    FUZZ_CHECK(whole.frames[k].type == reads.frames[k].type && whole.frames[k].payload == reads.frames[k].payload,
               "a frame differs with how the bytes arrive");
  FUZZ_CHECK(whole.error == reads.error, "the error differs with how the bytes arrive");
  for (const Frame& f : whole.frames) CheckPayloadDecoders(f.payload);
  FeedRoot(whole.frames, (seed & 1) != 0);
  return 0;
}
