// stream/window/bucket_codec.h, through the three window synopses' Encode and
// Decode (WindowCount, ItemCounts, WindowQuantiles): they round-trip exactly
// and go on identically; every truncation is refused as Corruption; flipped
// bytes never crash a decoder (they are refused, or decode to a state that
// keeps working); foreign bytes and an eps too small to size are refused.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "stream/testing/workloads.h"
#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

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

TEST(BucketCodecTest, WindowCount) {
  auto c = WindowCount::Create({40, 6}, 0.05);
  ASSERT_OK(c);
  CheckSynopsisCodec(std::move(*c), [](WindowCount& s, const Arrival& a) { s.Update(a.ts); });
}

TEST(BucketCodecTest, ItemCounts) {
  auto c = ItemCounts::Create({40, 6}, 0.02);
  ASSERT_OK(c);
  CheckSynopsisCodec(std::move(*c), [](ItemCounts& s, const Arrival& a) { s.Update(a.ts, a.item); });
}

TEST(BucketCodecTest, WindowQuantiles) {
  auto c = WindowQuantiles::Create({40, 6}, 0.05);
  ASSERT_OK(c);
  CheckSynopsisCodec(std::move(*c), [](WindowQuantiles& s, const Arrival& a) { s.Update(a.ts, a.item); });
}

TEST(BucketCodecTest, RefusesForeignBytes) {
  auto r = WindowCount::Decode("not a synopsis");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(), "Corruption: window count: bad magic at byte 0");
  auto q = WindowQuantiles::Create({10, 0}, 0.1);
  ASSERT_OK(q);
  EXPECT_FALSE(ItemCounts::Decode(q->Encode()).ok());  // a quantile synopsis is not item counts
}

// An eps so small that 1/eps overflows size_t (1e-300) is refused, by
// Create and by Decode: the fuzz target `synopsis` found a snapshot with it
// whose decoder cast 4/eps to size_t (undefined behavior).
TEST(BucketCodecTest, RefusesAnEpsTooSmallToSize) {
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
TEST(BucketCodecTest, ErrorBoundNeverNegativeAndZeroWhenEmpty) {
  const std::string bytes =
      testing::ReadFileBytes(std::string(MOMENTA_TEST_DATA_DIR) + "/fuzz/synopsis/crash-negative_error_bound");
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
