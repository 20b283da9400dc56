// The stream encodings v1 stay readable and stable: the messages a site sends
// (EncodeMessage) and the three window synopses (WindowCount, ItemCounts,
// WindowQuantiles: magic, parameters, then bucket_codec.h's bucket layout and
// each synopsis's payload). Fixtures in tests/data/:
//
//   golden_stream_messages_v1.bin    GoldenMessages(), each as u8 length | bytes
//   golden_window_count_v1.bin       GoldenWindowCount()'s Encode()
//   golden_item_counts_v1.bin        GoldenItemCounts()'s Encode()
//   golden_window_quantiles_v1.bin   GoldenWindowQuantiles()'s Encode()
//   golden_wire_site_frames_v2.bin   GoldenSiteFrames(): what a site sends on a
//                                    connection (HELLO, SNAPSHOT, BATCH, BATCH)
//   golden_wire_root_frames_v2.bin   GoldenRootFrames(): WELCOME, REJECT (final)
//   golden_wire_final_frames_v3.bin  GoldenFinalFrames(): a protocol-3 site whose input
//                                    ended (HELLO v3, SNAPSHOT, FINAL)
//
// The wire's frames are v2 (wire_frame.h: 20-byte header with a sequence and
// the header's own crc); a v1 frame is refused by version, so no v1 frame
// file exists to keep decoding.
//
// Each decodes, answers what it answered when written (listed below), and
// re-encodes byte for byte; today's EncodeMessage produces the message file
// byte for byte. The synopsis files were written by this version from
// GoldenStream() (MOMENTA_WRITE_STREAM_GOLDEN=<dir> writes them again, for a
// NEW version's files only). A format change adds *_v2 files and keeps
// these: v1 must keep decoding. (The count file caught a decoder that asked
// 12 bytes per bucket of 11-byte buckets: small timestamps did not decode.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "stream/net/handshake.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_frame.h"
#include "stream/protocol/messages.h"
#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;

std::string DataFile(const std::string& name) { return std::string(MOMENTA_TEST_DATA_DIR) + "/" + name; }

// One message of every type, with extreme fields where the format has them.
std::vector<Message> GoldenMessages() {
  std::vector<Message> out;
  Message m;
  m.type = MessageType::kBcDelta;
  m.site = 3;
  m.tick = -17;
  m.delta = -5;
  out.push_back(m);
  m.delta = 1234567;
  m.tick = 1700000000000;
  out.push_back(m);
  m = {};
  m.type = MessageType::kAcSet;
  m.site = 70000;
  m.tick = int64_t{1} << 45;
  m.item = INT64_MIN;
  m.count = 12345;
  out.push_back(m);
  m = {};
  m.type = MessageType::kAcOff;
  m.site = 1;
  m.tick = 9;
  m.item = INT64_MAX;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQSummary;
  m.site = 2;
  m.tick = 100;
  m.count = 1000;
  m.pairs = {{INT64_MIN, 1}, {-3, 400}, {9, 400}, {INT64_MAX, 1000}};
  out.push_back(m);
  m = {};
  m.type = MessageType::kQSummary;  // an empty window's summary
  m.site = 2;
  m.tick = 101;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQCount;
  m.site = 4;
  m.tick = 5;
  m.count = 99;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQLevel;
  m.site = 4;
  m.tick = 5;
  m.item = 42;
  m.count = uint64_t{1} << 32;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQDrop;
  m.site = 4;
  m.tick = 6;
  m.item = -42;
  out.push_back(m);
  return out;
}

// A small deterministic stream (no RNG): W = 20, tau = 3, 60 ticks, items
// 0..10 with a heavy item 0, some arrivals up to 3 ticks late, an idle
// stretch, then a burst, so the state holds merged, straddling and unsettled
// buckets.
template <class Feed>
void GoldenStream(Feed&& feed) {
  for (int64_t t = 0; t < 60; ++t) {
    if (t >= 30 && t < 38) continue;  // idle: expiry only
    const int per_tick = t == 50 ? 40 : 1 + static_cast<int>(t % 5);
    for (int j = 0; j < per_tick; ++j) {
      const int64_t ts = t - (j % 4 == 3 ? j % 7 % 4 : 0);
      const int64_t item = (j % 3 == 0) ? 0 : (t * 7 + j * 13) % 11;
      feed(t, ts, item);
    }
  }
}

constexpr WindowSpec kSpec{20, 3};

WindowCount GoldenWindowCount() {
  auto created = WindowCount::Create(kSpec, 0.1);
  WindowCount c = std::move(*created);
  GoldenStream([&](int64_t t, int64_t ts, int64_t) {
    c.AdvanceTo(t);
    c.Update(ts);
  });
  return c;
}
ItemCounts GoldenItemCounts() {
  auto created = ItemCounts::Create(kSpec, 0.1);
  ItemCounts c = std::move(*created);
  GoldenStream([&](int64_t t, int64_t ts, int64_t item) {
    c.AdvanceTo(t);
    c.Update(ts, item);
  });
  return c;
}
WindowQuantiles GoldenWindowQuantiles() {
  auto created = WindowQuantiles::Create(kSpec, 0.1);
  WindowQuantiles c = std::move(*created);
  GoldenStream([&](int64_t t, int64_t ts, int64_t item) {
    c.AdvanceTo(t);
    c.Update(ts, item);
  });
  return c;
}

std::string EncodeGoldenMessages() {
  std::string out;
  for (const Message& m : GoldenMessages()) {
    const std::string bytes = EncodeMessage(m);
    EXPECT_LT(bytes.size(), 256u);
    out += static_cast<char>(bytes.size());
    out += bytes;
  }
  return out;
}

constexpr int64_t kGoldenClock = int64_t{1} << 46;  // at or after every golden message's tick
const MonitorParams kGoldenParams{0.01, {60000, 5}};

// A protocol-2 site's frames (its HELLO says version 2).
std::string GoldenSiteFrames() {
  FrameWriter w;
  std::string out = w.Encode(FrameType::kHello, EncodeHello({2, "east-1", "tok", kGoldenParams}));
  out += w.Encode(FrameType::kSnapshot, EncodeBatch(kGoldenClock, GoldenMessages()));
  out += w.Encode(FrameType::kBatch, EncodeBatch(kGoldenClock, {GoldenMessages()[0]}));
  out += w.Encode(FrameType::kBatch, EncodeBatch(kGoldenClock + 1, {}));
  return out;
}

// A protocol-3 site whose input ended: HELLO (version 3), SNAPSHOT, FINAL
// (last time kGoldenClock, drained through kGoldenClock + 60000 with the
// golden messages' first one).
std::string GoldenFinalFrames() {
  FrameWriter w;
  std::string out = w.Encode(FrameType::kHello, EncodeHello({3, "east-1", "tok", kGoldenParams}));
  out += w.Encode(FrameType::kSnapshot, EncodeBatch(kGoldenClock, GoldenMessages()));
  out += w.Encode(FrameType::kFinal, EncodeFinal(kGoldenClock, kGoldenClock + 60000, {GoldenMessages()[0]}));
  return out;
}

std::string GoldenRootFrames() {
  FrameWriter w;
  std::string out = w.Encode(FrameType::kWelcome, EncodeWelcome({kGoldenParams, 7, 0x0123456789abcdefull}));
  out += w.Encode(FrameType::kReject, EncodeReject("wrong token", true));
  return out;
}

// Writes the fixtures when asked to (for a new version's files), else nothing.
bool WriteFixturesIfAsked() {
  const char* dir = std::getenv("MOMENTA_WRITE_STREAM_GOLDEN");
  if (dir == nullptr || *dir == 0) return false;
  const std::string d(dir);
  testing::WriteFileBytes(d + "/golden_stream_messages_v1.bin", EncodeGoldenMessages());
  testing::WriteFileBytes(d + "/golden_window_count_v1.bin", GoldenWindowCount().Encode());
  testing::WriteFileBytes(d + "/golden_item_counts_v1.bin", GoldenItemCounts().Encode());
  testing::WriteFileBytes(d + "/golden_window_quantiles_v1.bin", GoldenWindowQuantiles().Encode());
  testing::WriteFileBytes(d + "/golden_wire_site_frames_v2.bin", GoldenSiteFrames());
  testing::WriteFileBytes(d + "/golden_wire_root_frames_v2.bin", GoldenRootFrames());
  testing::WriteFileBytes(d + "/golden_wire_final_frames_v3.bin", GoldenFinalFrames());
  return true;
}

TEST(StreamGoldenTest, MessagesVersionOne) {
  if (WriteFixturesIfAsked()) GTEST_SKIP() << "fixtures written";
  const std::string golden = ReadFileBytes(DataFile("golden_stream_messages_v1.bin"));
  const std::vector<Message> want = GoldenMessages();
  size_t pos = 0, i = 0;
  while (pos < golden.size()) {
    ASSERT_LT(i, want.size()) << "more messages in the file than listed";
    const size_t len = static_cast<unsigned char>(golden[pos]);
    ASSERT_LE(pos + 1 + len, golden.size());
    const std::string bytes = golden.substr(pos + 1, len);
    SCOPED_TRACE("message " + std::to_string(i));
    auto got = DecodeMessage(bytes);
    ASSERT_OK(got);
    EXPECT_EQ(*got, want[i]);
    EXPECT_EQ(EncodeMessage(*got), bytes);
    pos += 1 + len;
    ++i;
  }
  EXPECT_EQ(i, want.size());
  EXPECT_TRUE(EncodeGoldenMessages() == golden) << "today's EncodeMessage differs from format v1";
}

// Cuts a fixture into frames, in random-free but uneven pieces (as a socket would).
std::vector<Frame> ReadFrames(const std::string& bytes) {
  FrameReader r("golden", kDefaultMaxPayload);
  std::vector<Frame> out;
  for (size_t pos = 0, piece = 1; pos < bytes.size(); pos += piece, piece = piece * 3 % 17 + 1) {
    r.Append(bytes.data() + pos, std::min(piece, bytes.size() - pos));
    Frame f;
    while (true) {
      auto more = r.Next(&f);
      EXPECT_OK(more);
      if (!more.ok() || !*more) break;
      out.push_back(f);
    }
  }
  EXPECT_EQ(r.buffered(), 0u);
  return out;
}

TEST(StreamGoldenTest, WireFramesVersionTwo) {
  const std::string site = ReadFileBytes(DataFile("golden_wire_site_frames_v2.bin"));
  EXPECT_TRUE(GoldenSiteFrames() == site) << "today's frames differ from wire format v2";
  const std::vector<Frame> s = ReadFrames(site);
  ASSERT_EQ(s.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(s[i].sequence, i);
  EXPECT_EQ(s[0].type, FrameType::kHello);
  auto hello = DecodeHello(s[0].payload);
  ASSERT_OK(hello);
  EXPECT_EQ(hello->name, "east-1");
  EXPECT_EQ(hello->token, "tok");
  EXPECT_EQ(*hello->params, kGoldenParams);
  EXPECT_EQ(s[1].type, FrameType::kSnapshot);
  auto snap = DecodeBatch(s[1].payload);
  ASSERT_OK(snap);
  EXPECT_EQ(snap->clock, kGoldenClock);
  EXPECT_EQ(snap->messages, GoldenMessages());
  auto batch = DecodeBatch(s[3].payload);
  ASSERT_OK(batch);
  EXPECT_EQ(batch->clock, kGoldenClock + 1);
  EXPECT_TRUE(batch->messages.empty());

  const std::string root = ReadFileBytes(DataFile("golden_wire_root_frames_v2.bin"));
  EXPECT_TRUE(GoldenRootFrames() == root) << "today's frames differ from wire format v2";
  const std::vector<Frame> r = ReadFrames(root);
  ASSERT_EQ(r.size(), 2u);
  auto welcome = DecodeWelcome(r[0].payload);
  ASSERT_OK(welcome);
  EXPECT_EQ(welcome->params, kGoldenParams);
  EXPECT_EQ(welcome->slot, 7u);
  EXPECT_EQ(welcome->root_id, 0x0123456789abcdefull);
  auto reject = DecodeReject(r[1].payload);
  ASSERT_OK(reject);
  EXPECT_EQ(reject->reason, "wrong token");
  EXPECT_TRUE(reject->final);
}

// Protocol 3 adds FINAL; its HELLO says 3. Frames keep the v2 layout.
TEST(StreamGoldenTest, WireFinalVersionThree) {
  const std::string bytes = ReadFileBytes(DataFile("golden_wire_final_frames_v3.bin"));
  EXPECT_TRUE(GoldenFinalFrames() == bytes) << "today's frames differ from protocol 3";
  const std::vector<Frame> s = ReadFrames(bytes);
  ASSERT_EQ(s.size(), 3u);
  auto hello = DecodeHello(s[0].payload);
  ASSERT_OK(hello);
  EXPECT_EQ(hello->version, 3u);
  EXPECT_EQ(s[2].type, FrameType::kFinal);
  EXPECT_EQ(s[2].sequence, 2u);
  auto fin = DecodeFinal(s[2].payload);
  ASSERT_OK(fin);
  EXPECT_EQ(fin->last_time, kGoldenClock);
  EXPECT_EQ(fin->batch.clock, kGoldenClock + 60000);
  EXPECT_EQ(fin->batch.messages, std::vector<Message>{GoldenMessages()[0]});
  // A protocol-2 HELLO is still taken.
  auto old = DecodeHello(ReadFrames(ReadFileBytes(DataFile("golden_wire_site_frames_v2.bin")))[0].payload);
  ASSERT_OK(old);
  EXPECT_EQ(old->version, 2u);
}

TEST(StreamGoldenTest, WindowCountVersionOne) {
  const std::string golden = ReadFileBytes(DataFile("golden_window_count_v1.bin"));
  auto c = WindowCount::Decode(golden);
  ASSERT_OK(c);
  EXPECT_EQ(c->Encode(), golden);
  EXPECT_EQ(c->spec(), kSpec);
  EXPECT_EQ(c->eps(), 0.1);
  EXPECT_EQ(c->now(), 59);
  EXPECT_EQ(c->Low(), 99u);  // exact: the window holds 99 items
  EXPECT_EQ(c->High(), 99u);
  EXPECT_EQ(c->Estimate(), 99);
  EXPECT_EQ(c->dropped(), 0u);
}

TEST(StreamGoldenTest, ItemCountsVersionOne) {
  const std::string golden = ReadFileBytes(DataFile("golden_item_counts_v1.bin"));
  auto c = ItemCounts::Decode(golden);
  ASSERT_OK(c);
  EXPECT_EQ(c->Encode(), golden);
  EXPECT_EQ(c->spec(), kSpec);
  EXPECT_EQ(c->item_eps(), 0.1);
  EXPECT_EQ(c->now(), 59);
  EXPECT_EQ(c->Count(), 99);
  EXPECT_EQ(c->Estimate(0), 43.5);  // true counts 44, 5 and 0
  EXPECT_EQ(c->Estimate(5), 4.5);
  EXPECT_EQ(c->Estimate(99), 0.5);
  const std::vector<ItemEstimate> top = c->Top(2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].item, 0);
}

TEST(StreamGoldenTest, WindowQuantilesVersionOne) {
  const std::string golden = ReadFileBytes(DataFile("golden_window_quantiles_v1.bin"));
  auto c = WindowQuantiles::Decode(golden);
  ASSERT_OK(c);
  EXPECT_EQ(c->Encode(), golden);
  EXPECT_EQ(c->spec(), kSpec);
  EXPECT_EQ(c->eps(), 0.1);
  EXPECT_EQ(c->now(), 59);
  EXPECT_EQ(c->Count(), 99);
  EXPECT_EQ(c->Quantile(0.0), 0);
  EXPECT_EQ(c->Quantile(0.5), 1);  // the exact median
  EXPECT_EQ(c->Quantile(1.0), 10);
}

// The fixtures still come from the recipe above with today's code: what it
// builds decodes to the same answers (a failure here with the tests above
// passing means the synopses now build a different state, not a format change).
TEST(StreamGoldenTest, RecipeAnswersAsTheFixtures) {
  auto c = WindowCount::Decode(ReadFileBytes(DataFile("golden_window_count_v1.bin")));
  auto i = ItemCounts::Decode(ReadFileBytes(DataFile("golden_item_counts_v1.bin")));
  auto q = WindowQuantiles::Decode(ReadFileBytes(DataFile("golden_window_quantiles_v1.bin")));
  ASSERT_OK(c);
  ASSERT_OK(i);
  ASSERT_OK(q);
  EXPECT_EQ(GoldenWindowCount().Estimate(), c->Estimate());
  const ItemCounts items = GoldenItemCounts();
  for (int64_t j = 0; j <= 11; ++j) EXPECT_EQ(items.Estimate(j), i->Estimate(j)) << "item " << j;
  const WindowQuantiles quant = GoldenWindowQuantiles();
  for (double phi : {0.0, 0.25, 0.5, 0.75, 1.0}) EXPECT_EQ(quant.Quantile(phi), q->Quantile(phi)) << phi;
}

}  // namespace
}  // namespace momenta
