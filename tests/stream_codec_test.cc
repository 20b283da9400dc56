// Encodings of stream/: messages and the three window synopses round-trip
// exactly; every truncation is refused as Corruption; flipped bytes never
// crash a decoder (they are refused, or decode to a state that keeps working).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "stream/window/item_counts.h"
#include "stream/protocol/messages.h"
#include "stream/window/packed_pairs.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "stream/testing/workloads.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

std::vector<Message> SampleMessages() {
  std::vector<Message> out;
  Message m;
  m.site = 3;
  m.tick = -17;
  m.type = MessageType::kBcDelta;
  m.delta = -5;
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
  m.item = INT64_MAX;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQSummary;
  m.count = 1000;
  m.pairs = {{INT64_MIN, 1}, {-3, 400}, {9, 400}, {INT64_MAX, 1000}};
  out.push_back(m);
  m = {};
  m.type = MessageType::kQCount;
  m.count = 99;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQLevel;
  m.item = 42;
  m.count = uint64_t{1} << 32;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQDrop;
  m.item = -42;
  out.push_back(m);
  return out;
}

TEST(StreamMessageTest, RoundTripAndWords) {
  for (const Message& m : SampleMessages()) {
    const std::string bytes = EncodeMessage(m);
    auto back = DecodeMessage(bytes);
    ASSERT_OK(back);
    EXPECT_EQ(*back, m);
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      auto r = DecodeMessage(bytes.substr(0, cut));
      ASSERT_FALSE(r.ok()) << "prefix of " << cut << " bytes decoded";
      EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
    }
    EXPECT_FALSE(DecodeMessage(bytes + "x").ok());
  }
  EXPECT_EQ(MessageWords(SampleMessages()[3]), 2u + 2 * 4);
  EXPECT_EQ(MessageBits(SampleMessages()[0]), 7u);  // zigzag(-5) = 9: Elias-gamma 7 bits
}

TEST(StreamMessageTest, RefusesMalformed) {
  EXPECT_FALSE(DecodeMessage(std::string("\x09\x00\x00", 3)).ok());  // unknown type
  Message m;
  m.type = MessageType::kBcDelta;
  m.delta = 0;
  EXPECT_FALSE(DecodeMessage(EncodeMessage(m)).ok());  // a zero delta is never sent
  m = {};
  m.type = MessageType::kQSummary;
  m.count = 5;
  m.pairs = {{1, 3}, {2, 2}};  // ranks going down
  EXPECT_FALSE(DecodeMessage(EncodeMessage(m)).ok());
  m.pairs = {{1, 3}, {2, 9}};  // rank above n
  EXPECT_FALSE(DecodeMessage(EncodeMessage(m)).ok());
  // A count claiming more pairs than the bytes can hold allocates nothing big.
  std::string huge("\x04\x00\x00\x05\xff\xff\xff\xff\x0f", 9);
  auto r = DecodeMessage(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("Corruption: message:"), std::string::npos) << r.status().ToString();
}

// Feeds the same arrivals to a synopsis and to its decoded copy.
template <class Synopsis, class Feed>
void CheckSynopsisCodec(Synopsis a, Feed feed) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  WorkloadParams wp;
  wp.spec = a.spec();
  wp.rate = 15;
  wp.seed = seed;
  auto w = MakeWorkload("late_uniform", wp);
  std::vector<Arrival> arr;
  for (int64_t t = 0; t < 250; ++t) {
    arr.clear();
    w->Arrivals(t, 0, &arr);
    a.AdvanceTo(t);
    for (const Arrival& x : arr) feed(a, x);
  }
  const std::string bytes = a.Encode();
  auto b = Synopsis::Decode(bytes);
  ASSERT_OK(b);
  EXPECT_EQ(b->Encode(), bytes);
  // Both go on identically.
  for (int64_t t = 250; t < 400; ++t) {
    arr.clear();
    w->Arrivals(t, 0, &arr);
    a.AdvanceTo(t);
    b->AdvanceTo(t);
    for (const Arrival& x : arr) {
      feed(a, x);
      feed(*b, x);
    }
    ASSERT_EQ(a.Encode(), b->Encode()) << "tick " << t;
  }
  // Every truncation is refused; flipped bytes never crash.
  for (size_t cut = 0; cut < bytes.size(); cut += 1 + cut / 64) {
    auto r = Synopsis::Decode(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(r.ok()) << "prefix of " << cut << " bytes decoded";
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    std::string bad = bytes;
    bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    auto r = Synopsis::Decode(bad);
    if (r.ok()) {
      r->AdvanceTo(r->now() + 1);  // a state that decodes must keep working
      (void)r->Encode();
    }
  }
}

TEST(StreamSynopsisCodecTest, WindowCount) {
  auto c = WindowCount::Create({40, 6}, 0.05);
  ASSERT_OK(c);
  CheckSynopsisCodec(std::move(*c), [](WindowCount& s, const Arrival& a) { s.Update(a.ts); });
}

TEST(StreamSynopsisCodecTest, ItemCounts) {
  auto c = ItemCounts::Create({40, 6}, 0.02);
  ASSERT_OK(c);
  CheckSynopsisCodec(std::move(*c), [](ItemCounts& s, const Arrival& a) { s.Update(a.ts, a.item); });
}

TEST(StreamSynopsisCodecTest, WindowQuantiles) {
  auto c = WindowQuantiles::Create({40, 6}, 0.05);
  ASSERT_OK(c);
  CheckSynopsisCodec(std::move(*c), [](WindowQuantiles& s, const Arrival& a) { s.Update(a.ts, a.item); });
}

// The in-memory packing of settled buckets: any keys (extremes included) and
// counts come back, by index, by look-up and in order.
TEST(PackedPairsTest, RoundTripsAtEveryWidth) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int round = 0; round < 300; ++round) {
    const size_t n = round < 4 ? static_cast<size_t>(round) : 1 + rng() % 700;
    const int key_shift = static_cast<int>(rng() % 64), count_shift = static_cast<int>(rng() % 32);
    std::vector<std::pair<int64_t, uint32_t>> want;
    int64_t key = round % 3 == 0 ? INT64_MIN : static_cast<int64_t>(rng() >> 1) - (int64_t{1} << 61);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t count = 1 + static_cast<uint32_t>(rng() >> (32 + count_shift));
      want.push_back({key, count});
      const uint64_t gap = 1 + (rng() >> key_shift);
      if (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(key) <= gap) break;
      key = static_cast<int64_t>(static_cast<uint64_t>(key) + gap);
    }
    if (round % 5 == 0 && !want.empty() && want.back().first != INT64_MAX) want.push_back({INT64_MAX, 7});
    PackedPairs p = PackedPairs::Pack(
        want.size(), [&](size_t i) { return want[i].first; }, [&](size_t i) { return want[i].second; });
    ASSERT_EQ(p.size(), want.size());
    size_t i = 0;
    p.ForEach([&](int64_t k, uint32_t c) {
      ASSERT_LT(i, want.size());
      EXPECT_EQ(k, want[i].first) << "round " << round << " pair " << i;
      EXPECT_EQ(c, want[i].second) << "round " << round << " pair " << i;
      ++i;
    });
    EXPECT_EQ(i, want.size());
    for (size_t j = 0; j < want.size(); j += 1 + j / 8) {
      EXPECT_EQ(p.key(j), want[j].first);
      EXPECT_EQ(p.count(j), want[j].second);
      EXPECT_EQ(p.Find(want[j].first), want[j].second);
    }
    if (!want.empty() && want[0].first != INT64_MIN) {
      EXPECT_EQ(p.Find(want[0].first - 1), 0u);
    }
    PackedPairs moved = std::move(p);
    EXPECT_EQ(moved.size(), want.size());
  }
}

TEST(StreamSynopsisCodecTest, RefusesForeignBytes) {
  auto r = WindowCount::Decode("not a synopsis");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(), "Corruption: window count: bad magic at byte 0");
  auto q = WindowQuantiles::Create({10, 0}, 0.1);
  ASSERT_OK(q);
  EXPECT_FALSE(ItemCounts::Decode(q->Encode()).ok());  // a quantile synopsis is not item counts
}

// An eps so small that 1/eps overflows size_t (1e-300) is refused, by
// Create and by Decode: the fuzz target `synopsis` found a snapshot with it
// whose decoder cast 4/eps to size_t (undefined behaviour).
TEST(StreamSynopsisCodecTest, RefusesAnEpsTooSmallToSize) {
  EXPECT_FALSE(WindowQuantiles::Create({10, 0}, 1e-300).ok());
  EXPECT_FALSE(ItemCounts::Create({10, 0}, 1e-300).ok());
  EXPECT_FALSE(WindowCount::Create({10, 0}, 1e-300).ok());
  EXPECT_OK(WindowQuantiles::Create({10, 0}, kMinEps));
  auto q = WindowQuantiles::Create({10, 0}, 0.1);
  ASSERT_OK(q);
  std::string bytes = q->Encode();
  // The header's f64 eps follows the magic and two one-byte varints.
  const size_t at = bytes.find("MWQNT1") + 6 + 2;
  const double tiny = 1e-300;
  std::memcpy(&bytes[at], &tiny, sizeof tiny);
  auto decoded = WindowQuantiles::Decode(bytes);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), Status::Code::kCorruption) << decoded.status().ToString();
  auto message = CheckEps(1e-300, "--eps");
  EXPECT_EQ(message.ToString(), "Invalid argument: --eps: eps must lie in (0, 1), at least 1e-12, got 1e-300");
}

// The error bound is a running sum of the buckets' errors: the fuzz target
// `synopsis` found a snapshot (tiny errors like 1e-270 among others) whose
// window, once every bucket expired, answered an error bound of -1.9e-270.
TEST(StreamSynopsisCodecTest, ErrorBoundNeverNegativeAndZeroWhenEmpty) {
  const std::string bytes = testing::ReadFileBytes(std::string(MOMENTA_TEST_DATA_DIR) +
                                                   "/fuzz/synopsis/crash-negative_error_bound");
  auto c = ItemCounts::Decode(bytes);
  ASSERT_OK(c);
  const WindowSpec spec = c->spec();
  int64_t t = c->now() + 1;
  c->AdvanceTo(t);
  c->Update(t, 7);
  c->Update(t, -3, 2);
  c->Update(t - spec.tardiness, 7);
  EXPECT_GE(c->ErrorBound(), 0);
  t += spec.window / 2 + 1;
  c->AdvanceTo(t);
  c->Update(t, 7);
  EXPECT_GE(c->ErrorBound(), 0);
  c->AdvanceTo(t + spec.window + 1);
  EXPECT_EQ(c->CountHigh(), 0u);
  EXPECT_EQ(c->ErrorBound(), 0);
  EXPECT_EQ(c->SharedTerm(), 0);
}

}  // namespace
}  // namespace momenta
