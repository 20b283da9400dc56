// stream/window/window_spec.h: the clock semantics every synopsis follows
// (an item exactly tau late is accepted, one more is dropped; a late item
// expires with its own timestamp; the data's clock moves forward; everything
// expires without arrivals) and the parameter checks' one-line messages.
#include <gtest/gtest.h>

#include <cstdint>

#include "stream/protocol/site.h"
#include "stream/window/item_counts.h"
#include "stream/window/window_count.h"
#include "stream/window/window_quantiles.h"
#include "tests/assert_ok.h"

namespace momenta {
namespace {

TEST(WindowSpecClockTest, TardinessAcceptsExactlyTauLate) {
  auto c = WindowCount::Create({10, 3}, 0.1);
  ASSERT_OK(c);
  c->AdvanceTo(100);
  EXPECT_TRUE(c->Update(97));   // exactly tau late
  EXPECT_FALSE(c->Update(96));  // one more: dropped
  EXPECT_TRUE(c->Update(100));
  EXPECT_EQ(c->dropped(), 1u);
  EXPECT_EQ(c->Estimate(), 2);
  // A late item expires with its own timestamp, not its arrival time.
  c->AdvanceTo(107);
  EXPECT_EQ(c->Estimate(), 1);
  c->AdvanceTo(110);
  EXPECT_EQ(c->Estimate(), 0);
  // A timestamp ahead of the clock moves the clock (the data's own clock).
  EXPECT_TRUE(c->Update(200));
  EXPECT_EQ(c->now(), 200);
}

TEST(WindowSpecClockTest, ExpiresWithoutArrivals) {
  auto items = ItemCounts::Create({50, 0}, 0.01);
  auto quant = WindowQuantiles::Create({50, 0}, 0.05);
  ASSERT_OK(items);
  ASSERT_OK(quant);
  for (int64_t t = 0; t < 200; ++t)
    for (int i = 0; i < 100; ++i) {
      items->Update(t, i % 7);
      quant->Update(t, i);
    }
  EXPECT_GT(items->Count(), 4000);
  // Time passes, nothing arrives: everything leaves, exactly.
  items->AdvanceTo(249);
  quant->AdvanceTo(249);
  EXPECT_EQ(items->Count(), 0);
  EXPECT_EQ(items->Estimate(3), 0);
  EXPECT_TRUE(items->Top(5).empty());
  EXPECT_EQ(quant->Count(), 0);
  EXPECT_FALSE(quant->Quantile(0.5).has_value());
}

TEST(WindowSpecParamsTest, RefusedWithOneLineMessages) {
  auto bad_w = WindowCount::Create({0, 0}, 0.1);
  ASSERT_FALSE(bad_w.ok());
  EXPECT_EQ(bad_w.status().ToString(), "Invalid argument: window: W must lie in [1, 2^61], got 0");
  auto bad_tau = ItemCounts::Create({10, 10}, 0.1);
  ASSERT_FALSE(bad_tau.ok());
  EXPECT_EQ(bad_tau.status().ToString(),
            "Invalid argument: window: tardiness must lie in [0, W-1], got 10 with W = 10");
  auto bad_eps = WindowQuantiles::Create({10, 0}, 1.5);
  ASSERT_FALSE(bad_eps.ok());
  EXPECT_EQ(bad_eps.status().code(), Status::Code::kInvalidArgument);
  SiteOptions o;
  o.eps = 0;
  EXPECT_FALSE(Site::Create(0, o).ok());
}

}  // namespace
}  // namespace momenta
