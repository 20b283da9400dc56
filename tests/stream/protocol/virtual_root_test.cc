// stream/protocol/virtual_root.h fed by one stream/protocol/site.h: when the
// site's arrivals stop, the root's count, item counts, frequent items and
// quantiles all reach zero (expiry without arrivals, end to end).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "stream/protocol/site.h"
#include "stream/protocol/virtual_root.h"
#include "tests/assert_ok.h"

namespace momenta {
namespace {

TEST(VirtualRootClockTest, RootReachesZeroWhenSitesGoIdle) {
  SiteOptions o;
  o.spec = {20, 0};
  o.eps = 0.1;
  auto site = Site::Create(0, o);
  ASSERT_OK(site);
  VirtualRoot root(1, o.eps);
  std::vector<Message> out;
  for (int64_t t = 0; t < 100; ++t) {
    std::vector<Arrival> arr;
    if (t < 30)
      for (int i = 0; i < 50; ++i) arr.push_back({t, i % 5});
    out.clear();
    (*site)->Tick(t, arr, &out);
    for (const Message& m : out) root.Apply(m);
    if (t == 29) {
      EXPECT_NEAR(root.Count(), 1000, 1000 * 0.1 / 24);
      EXPECT_EQ(root.Frequent(0.1).size(), 5u);
    }
  }
  EXPECT_EQ(root.Count(), 0);
  EXPECT_EQ(root.ItemCount(3), 0);
  EXPECT_TRUE(root.Frequent(0.1).empty());
  EXPECT_FALSE(root.QuantileByDrift(0.5).has_value());
}

}  // namespace
}  // namespace momenta
