// momenta shard create: shards in their folders holding the source's pieces,
// the manifest momenta.dask reads, and a failed create leaving nothing behind.
// (tests/python/test_dask.py reads this manifest with ShardedArray.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::RunCli;
using testing::ScratchDir;

// `momenta get PATH 0 --count N` as one line per element.
std::string Elements(const std::string& path, int n) {
  auto r = RunCli({"get", path, "0", "--count", std::to_string(n)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(ShardCommandTest, SplitsANpyRoundRobinWithReplicas) {
  ScratchDir dir;
  const std::string src = dir.File("s.npy");
  ASSERT_EQ(RunCli({"create", src, "--length", "10", "--dtype", "i4"}).exit_code, 0);
  ASSERT_EQ(RunCli({"set", src, "0", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}).exit_code, 0);
  const std::string a = dir.File("a"), b = dir.File("b"), m = dir.File("big.json");
  auto r = RunCli({"shard", "create", src, "--manifest", m, "--shard-length", "4", "--placement",
                   "tcp://10.0.0.5:40113=" + a, "--placement", "w2=" + b, "--replicas", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = ReadFileBytes(m);
  EXPECT_EQ(json.rfind("{\"format\":\"momenta-sharded-array\",\"version\":1,\"dtype\":\"i4\",\"shape\":[10],"
                       "\"order\":2,\"shards\":[",
                       0),
            0u)
      << json;
  const std::string shard0 = "{\"start\":0,\"stop\":4,\"worker\":\"tcp://10.0.0.5:40113\",\"path\":\"" + a +
                             "/big.shard00000.npy\",\"replicas\":[{\"worker\":\"w2\",\"path\":\"" + b +
                             "/big.shard00000.r1.npy\"}]}";
  EXPECT_NE(json.find(shard0), std::string::npos) << json;
  EXPECT_NE(json.find("{\"start\":8,\"stop\":10,\"worker\":\"tcp://10.0.0.5:40113\""), std::string::npos) << json;
  EXPECT_EQ(Elements(a + "/big.shard00000.npy", 4), "0\n1\n2\n3\n");
  EXPECT_EQ(Elements(b + "/big.shard00000.r1.npy", 4), "0\n1\n2\n3\n");
  EXPECT_EQ(Elements(b + "/big.shard00001.npy", 4), "4\n5\n6\n7\n");
  EXPECT_EQ(Elements(a + "/big.shard00002.npy", 2), "8\n9\n");
  auto q = RunCli({"query", a + "/big.shard00002.npy", "--range", ":", "--stat", "sum"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find("sum 17"), std::string::npos) << q.out;
}

TEST(ShardCommandTest, MakesEmptyShardsFromAShape) {
  ScratchDir dir;
  const std::string m = dir.File("e.json");
  auto r = RunCli({"shard", "create", "--shape", "3,5", "--dtype", "f4", "--manifest", m, "--shard-length", "2^3",
                   "--placement", "w=" + dir.File("f"), "--order", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = ReadFileBytes(m);
  EXPECT_NE(json.find("\"dtype\":\"f4\",\"shape\":[3,5],\"order\":3"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"start\":8,\"stop\":15,\"worker\":\"w\""), std::string::npos) << json;
  EXPECT_EQ(Elements(dir.File("f") + "/e.shard00001.npy", 7), "0\n0\n0\n0\n0\n0\n0\n");
}

TEST(ShardCommandTest, RefusesBadInputAndLeavesNothingBehind) {
  ScratchDir dir;
  const std::string src = dir.File("s.npy"), m = dir.File("m.json"), f = dir.File("f");
  ASSERT_EQ(RunCli({"create", src, "--length", "10"}).exit_code, 0);
  const std::vector<std::string> base = {"shard", "create", src, "--manifest", m, "--shard-length", "4"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  };
  EXPECT_EQ(with({"--placement", "nofolder"}).exit_code, 2);
  // A relative folder would mean another folder on each worker: refused, as momenta.dask refuses it.
  auto relative = with({"--placement", "w=rel/dir"});
  EXPECT_EQ(relative.exit_code, 2);
  EXPECT_NE(relative.err.find("w=rel/dir: the folder is relative; give its absolute path on that worker"),
            std::string::npos)
      << relative.err;
  EXPECT_FALSE(std::filesystem::exists("rel"));
  EXPECT_EQ(with({"--placement", "w=" + f, "--replicas", "1"}).exit_code, 2);  // one placement, no room for a copy
  EXPECT_EQ(with({"--placement", "w=" + f, "--shape", "10"}).exit_code, 2);    // SRC and --shape
  EXPECT_EQ(RunCli({"shard", "create", src, "--manifest", m, "--placement", "w=" + f}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(f));
  // A shard file in the way: the shards made before it are removed, no manifest is written.
  std::filesystem::create_directories(f);
  ASSERT_EQ(RunCli({"create", f + "/m.shard00002.npy", "--length", "1"}).exit_code, 0);
  auto r = with({"--placement", "w=" + f});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("m.shard00002.npy: exists"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(m));
  EXPECT_FALSE(std::filesystem::exists(f + "/m.shard00000.npy"));
  EXPECT_FALSE(std::filesystem::exists(f + "/m.shard00000.npy.momenta"));
  EXPECT_TRUE(std::filesystem::exists(f + "/m.shard00002.npy"));  // not ours: kept
  auto missing = RunCli(
      {"shard", "create", dir.File("none.npy"), "--manifest", m, "--shard-length", "4", "--placement", "w=" + f});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.npy"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace momenta
