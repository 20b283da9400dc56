// storage/array/shard_manifest.h: the manifest's exact bytes (the format
// momenta.dask reads; `momenta shard create` has written these since the
// format's version 1), and its atomic write.
#include "storage/array/shard_manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::ScratchDir;

ShardManifest TwoShards() {
  ShardManifest m;
  m.dtype = DType::kF4;
  m.shape = {3, 5};
  m.order = 2;
  m.shards.push_back({0, 8, {{"w0", "/d/a/m.shard00000.npy"}, {"w1", "/d/b/m.shard00000.r1.npy"}}});
  m.shards.push_back({8, 15, {{"w1", "/d/b/m.shard00001.npy"}}});
  return m;
}

TEST(ShardManifestTest, EncodesOneLineOfJson) {
  EXPECT_EQ(EncodeShardManifest(TwoShards()),
            R"({"format":"momenta-sharded-array","version":1,"dtype":"f4","shape":[3,5],"order":2,"shards":[)"
            R"({"start":0,"stop":8,"worker":"w0","path":"/d/a/m.shard00000.npy",)"
            R"("replicas":[{"worker":"w1","path":"/d/b/m.shard00000.r1.npy"}]},)"
            R"({"start":8,"stop":15,"worker":"w1","path":"/d/b/m.shard00001.npy"}]})"
            "\n");
}

TEST(ShardManifestTest, WritesThroughATemporaryAndLeavesNoneOnFailure) {
  ScratchDir dir;
  const std::string path = dir.File("m.json");
  ASSERT_OK(WriteShardManifest(path, TwoShards()));
  EXPECT_EQ(ReadFileBytes(path), EncodeShardManifest(TwoShards()));
  const Status bad = WriteShardManifest(dir.File("none/m.json"), TwoShards());
  EXPECT_EQ(bad.code(), Status::Code::kIOError);
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace momenta
