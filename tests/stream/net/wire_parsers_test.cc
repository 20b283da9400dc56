// The wire's parsers on hostile bytes: frames, handshake payloads and
// batches round-trip; every truncation is refused (or waits for more bytes);
// random byte flips never crash, never read past the end, and never yield a
// frame whose checksum did not match.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "stream/net/handshake.h"
#include "stream/net/wire_batch.h"
#include "stream/net/wire_frame.h"
#include "stream/protocol/site_mirror.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

std::vector<Message> SomeMessages() {
  std::vector<Message> out(4);
  out[0].type = MessageType::kBcDelta;
  out[0].tick = 7;
  out[0].delta = 12;
  out[1].type = MessageType::kAcSet;
  out[1].tick = 7;
  out[1].item = -42;
  out[1].count = 9;
  out[2].type = MessageType::kQCount;
  out[2].tick = 8;
  out[2].count = 100;
  out[3].type = MessageType::kQLevel;
  out[3].tick = 8;
  out[3].item = 5;
  out[3].count = uint64_t{1} << 31;
  return out;
}

TEST(WireParsersTest, RoundTrips) {
  Hello h{kProtocolVersion, "site-1.a_b", "tok", MonitorParams{0.01, {60000, 5}}};
  auto h2 = DecodeHello(EncodeHello(h));
  ASSERT_OK(h2);
  EXPECT_EQ(h2->name, h.name);
  EXPECT_EQ(h2->token, h.token);
  EXPECT_EQ(*h2->params, *h.params);
  Welcome w{MonitorParams{0.1, {100, 0}}, 3, 0xabcdef};
  auto w2 = DecodeWelcome(EncodeWelcome(w));
  ASSERT_OK(w2);
  EXPECT_EQ(w2->params, w.params);
  EXPECT_EQ(w2->slot, 3u);
  EXPECT_EQ(w2->root_id, 0xabcdefu);
  auto b = DecodeBatch(EncodeBatch(8, SomeMessages()));
  ASSERT_OK(b);
  EXPECT_EQ(b->clock, 8);
  EXPECT_EQ(b->messages, SomeMessages());
  // A mirror's snapshot rebuilds the same state.
  SiteMirror m(100), m2(100);
  for (const Message& x : SomeMessages()) ASSERT_OK(m.Apply(x));
  for (const Message& x : m.Snapshot(8)) ASSERT_OK(m2.Apply(x));
  EXPECT_EQ(m.Snapshot(8), m2.Snapshot(8));
  EXPECT_EQ(m2.bc_level(), 12u);
}

TEST(WireParsersTest, TruncationsRefused) {
  const std::string hello = EncodeHello({kProtocolVersion, "s", "t", MonitorParams{}});
  const std::string welcome = EncodeWelcome({MonitorParams{}, 1, 2});
  const std::string batch = EncodeBatch(8, SomeMessages());
  for (size_t n = 0; n < hello.size(); ++n) EXPECT_FALSE(DecodeHello(hello.substr(0, n)).ok()) << n;
  for (size_t n = 0; n < welcome.size(); ++n) EXPECT_FALSE(DecodeWelcome(welcome.substr(0, n)).ok()) << n;
  for (size_t n = 0; n < batch.size(); ++n) EXPECT_FALSE(DecodeBatch(batch.substr(0, n)).ok()) << n;
  EXPECT_FALSE(DecodeBatch(batch + "x").ok());
  const std::string frame = EncodeFrame(FrameType::kBatch, EncodeBatch(8, SomeMessages()));
  for (size_t n = 0; n < frame.size(); ++n) {
    FrameReader r("peer", 1 << 20);
    r.Append(frame.data(), n);
    Frame f;
    auto more = r.Next(&f);
    ASSERT_OK(more) << n;
    EXPECT_FALSE(*more) << n;  // waits for the rest
  }
}

// Frames carry their place on the connection: one delivered twice is
// dropped (and counted), one missing ends the connection.
TEST(WireParsersTest, SequenceDropsDuplicatesAndRefusesGaps) {
  const std::string f0 = EncodeFrame(FrameType::kBatch, EncodeBatch(1, {}), 0);
  const std::string f1 = EncodeFrame(FrameType::kBatch, EncodeBatch(2, SomeMessages()), 1);
  const std::string f2 = EncodeFrame(FrameType::kBatch, EncodeBatch(3, {}), 2);
  FrameReader r("peer", 1 << 16);
  const std::string bytes = f0 + f0 + f1 + f1 + f0 + f2;
  r.Append(bytes.data(), bytes.size());
  Frame f;
  std::vector<uint32_t> got;
  while (true) {
    auto more = r.Next(&f);
    ASSERT_OK(more);
    if (!*more) break;
    got.push_back(f.sequence);
  }
  EXPECT_EQ(got, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(r.duplicates(), 3u);
  EXPECT_EQ(r.buffered(), 0u);

  FrameReader gap("peer", 1 << 16);
  const std::string skipped = f0 + f2;
  gap.Append(skipped.data(), skipped.size());
  ASSERT_OK(gap.Next(&f));
  auto lost = gap.Next(&f);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().ToString(), "Corruption: peer: frame 2 out of sequence, expected 1 (frames lost)");
}

// The header has its own checksum: a damaged length is refused from the
// header alone, before the payload it announces would have arrived.
TEST(WireParsersTest, DamagedHeaderRefusedAtOnce) {
  const std::string frame = EncodeFrame(FrameType::kBatch, EncodeBatch(8, SomeMessages()));
  for (size_t byte = 0; byte < kFrameHeaderBytes; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = frame.substr(0, kFrameHeaderBytes);  // the header only
      bad[byte] ^= static_cast<char>(1 << bit);
      FrameReader r("peer", 1 << 30);
      r.Append(bad.data(), bad.size());
      Frame f;
      auto more = r.Next(&f);
      EXPECT_FALSE(more.ok()) << "byte " << byte << " bit " << bit;
    }
  }
  // A peer's huge (but well-formed) length prefix is refused, never allocated.
  FrameReader r("peer", kDefaultMaxPayload);
  const std::string huge = EncodeFrameHeader(FrameType::kBatch, 0xfffffff0u, 0, 0);
  r.Append(huge.data(), huge.size());
  Frame f;
  auto more = r.Next(&f);
  ASSERT_FALSE(more.ok());
  EXPECT_NE(more.status().ToString().find("frame of 4294967280 bytes over the cap of 4194304"), std::string::npos);
  EXPECT_EQ(r.buffered(), kFrameHeaderBytes);
}

TEST(WireParsersTest, ByteFlipsNeverCrash) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  const std::string good = EncodeFrame(FrameType::kHello, EncodeHello({kProtocolVersion, "s", "t", std::nullopt}), 0) +
                           EncodeFrame(FrameType::kBatch, EncodeBatch(8, SomeMessages()), 1);
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    FrameReader r("peer", 1 << 16);
    // Fed in random pieces, as a socket would.
    size_t pos = 0;
    int frames = 0;
    bool failed = false;
    while (pos < bytes.size() && !failed) {
      const size_t n = std::min(bytes.size() - pos, 1 + static_cast<size_t>(rng() % 40));
      r.Append(bytes.data() + pos, n);
      pos += n;
      Frame f;
      while (true) {
        auto more = r.Next(&f);
        if (!more.ok()) {
          failed = true;
          break;
        }
        if (!*more) break;
        ++frames;
        // A frame that passed its checksum may still be nonsense to its decoder.
        if (f.type == FrameType::kHello) (void)DecodeHello(f.payload);
        if (f.type == FrameType::kBatch) (void)DecodeBatch(f.payload);
      }
    }
    EXPECT_LE(frames, 2);
    EXPECT_LE(r.buffered(), bytes.size());
  }
  // Flipped payloads decoded directly (no checksum in the way).
  const std::string batch = EncodeBatch(8, SomeMessages());
  for (int round = 0; round < 20000; ++round) {
    std::string b = batch;
    b[rng() % b.size()] ^= static_cast<char>(1 + rng() % 255);
    auto d = DecodeBatch(b);
    if (d.ok()) {
      for (const Message& m : d->messages) EXPECT_LE(m.tick, d->clock);
    }
  }
}

}  // namespace
}  // namespace momenta
