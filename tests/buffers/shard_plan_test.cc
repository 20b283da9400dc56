// buffers/shard_plan.h: the one planner of sharded arrays (the CLI's `shard
// create` and momenta.dask.shard_create): pieces, round-robin placement with
// replicas, file names, and the absolute-folder rule.
#include "buffers/shard_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/assert_ok.h"

namespace momenta {
namespace {

TEST(ShardPlanTest, PiecesPlacesAndNames) {
  const std::vector<ShardPlace> places = {{"w0", "/d/a"}, {"tcp://h:1", "/d/b"}, {"w2", "/"}};
  const auto plan = PlanShards(10, 4, places, 1, "dir/big.json");
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].start, 0u);
  EXPECT_EQ(plan[0].stop, 4u);
  EXPECT_EQ(plan[2].start, 8u);
  EXPECT_EQ(plan[2].stop, 10u);  // the last one shorter
  ASSERT_EQ(plan[0].copies.size(), 2u);
  EXPECT_EQ(plan[0].copies[0].worker, "w0");
  EXPECT_EQ(plan[0].copies[0].path, "/d/a/big.shard00000.npy");
  EXPECT_EQ(plan[0].copies[1].worker, "tcp://h:1");
  EXPECT_EQ(plan[0].copies[1].path, "/d/b/big.shard00000.r1.npy");
  EXPECT_EQ(plan[1].copies[1].path, "/big.shard00001.r1.npy");
  EXPECT_EQ(plan[2].copies[0].path, "/big.shard00002.npy");
  EXPECT_EQ(plan[2].copies[1].path, "/d/a/big.shard00002.r1.npy");  // round the list
}

TEST(ShardPlanTest, ALengthNearTheTopDoesNotWrap) {
  const std::vector<ShardPlace> places = {{"w", "/d"}};
  const auto plan = PlanShards(UINT64_MAX, UINT64_MAX - 1, places, 0, "m.json");
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1].start, UINT64_MAX - 1);
  EXPECT_EQ(plan[1].stop, UINT64_MAX);
}

TEST(ShardPlanTest, PlacesAreAbsoluteAndNormalized) {
  auto p = ParseShardPlace("tcp://10.0.0.5:40113=/data/./a/", "--placement");
  ASSERT_OK(p);
  EXPECT_EQ(p->worker, "tcp://10.0.0.5:40113");
  EXPECT_EQ(p->folder, "/data/a");
  EXPECT_EQ(ParseShardPlace("w=here", "--placement").status().ToString(),
            "Invalid argument: --placement: w=here: the folder is relative; give its absolute path on that worker "
            "(a relative one names another folder on each machine)");
  EXPECT_EQ(ParseShardPlace("=/d", "--placement").status().ToString(),
            "Invalid argument: --placement: '=/d' is not WORKER=FOLDER");
  EXPECT_EQ(MakeShardPlace("0", "rel", "placement").status().ToString().find("placement: 0=rel: the folder is "),
            std::string("Invalid argument: ").size());
}

}  // namespace
}  // namespace momenta
