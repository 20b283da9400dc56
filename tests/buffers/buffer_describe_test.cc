// BufferedArray::Describe (what `momenta info` prints of a buffer): Inspect's
// condition and, where the buffer stays in place, its tree's layout and tiers
// as the tree itself gives them, with the Ola buffer beside it for kind ola;
// nothing for a buffer not built yet or due for a rebuild.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 5000;

BufferedArrayOptions Options(int ola_nodes, bool writable) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.tree.order = ola_nodes > 0 ? 0 : 2;
  o.tree.leaf_span = 256;
  o.tree.fanout = 4;
  o.tree.ola_nodes = ola_nodes;
  o.tree.ola_bin = ola_nodes > 0 ? 8 : 0;
  return o;
}

void MakeArray(const std::string& path) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  auto f = ArrayFile::Create(path, DType::kF8, shape, io);
  ASSERT_OK(f);
  std::vector<Value> values;
  for (uint64_t i = 0; i < kLength; ++i) values.push_back(Value::Float(static_cast<double>(i % 97) / 7.0));
  ASSERT_OK((*f)->WriteValues(0, values));
}

// The description against the tree's own layout, read through the facade's parts.
void ExpectTree(const BufferDescription& d, BufferedArray& ba) {
  MomentTree& tree = TreeOf(ba);
  const TreeLayout& l = tree.layout();
  EXPECT_EQ(d.order, tree.order());
  EXPECT_EQ(d.fanout, l.fanout());
  EXPECT_EQ(d.leaf_span, l.leaf_span());
  EXPECT_EQ(d.ram_from_level, l.ram_from());
  EXPECT_EQ(d.ram_budget, tree.header().ram_budget);
  EXPECT_EQ(d.ram_tier_bytes, tree.ram_tier_bytes());
  EXPECT_EQ(d.disk_tier_bytes, tree.disk_tier_bytes());
  ASSERT_EQ(static_cast<int>(d.levels.size()), l.levels());
  ASSERT_GE(l.levels(), 2);
  for (int k = 1; k <= l.levels(); ++k) {
    EXPECT_EQ(d.levels[k - 1].nodes, l.nodes(k)) << "level " << k;
    EXPECT_EQ(d.levels[k - 1].span, l.span(k)) << "level " << k;
    EXPECT_EQ(d.levels[k - 1].bytes, l.nodes(k) * tree.codec().bytes()) << "level " << k;
    EXPECT_EQ(d.levels[k - 1].in_ram, l.in_ram(k)) << "level " << k;
  }
}

TEST(BufferDescribeTest, NothingBeforeTheBufferIsBuilt) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path);
  auto info = BufferedArray::Describe(path, Options(0, false));
  ASSERT_OK(info);
  EXPECT_EQ(info->condition.kind, BufferCondition::Kind::kMissing);
  EXPECT_FALSE(info->buffer.has_value());
}

TEST(BufferDescribeTest, KindHbbIsTheTreeAlone) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path);
  {
    auto ba = BufferedArray::Open(path, Options(0, true));
    ASSERT_OK(ba);
  }
  auto ba = BufferedArray::Open(path, Options(0, false));
  ASSERT_OK(ba);
  auto info = BufferedArray::Describe(path, Options(0, false));
  ASSERT_OK(info);
  EXPECT_EQ(info->condition.kind, BufferCondition::Kind::kCurrent);
  ASSERT_TRUE(info->buffer.has_value());
  EXPECT_EQ(info->buffer->kind, "hbb");
  EXPECT_EQ(info->buffer->order, 2);
  EXPECT_FALSE(info->buffer->ola.has_value());
  ExpectTree(*info->buffer, **ba);
}

TEST(BufferDescribeTest, KindOlaAddsItsFile) {
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  MakeArray(path);
  {
    auto ba = BufferedArray::Open(path, Options(4, true));
    ASSERT_OK(ba);
  }
  auto ba = BufferedArray::Open(path, Options(4, false));
  ASSERT_OK(ba);
  auto info = BufferedArray::Describe(path, Options(4, false));
  ASSERT_OK(info);
  ASSERT_TRUE(info->buffer.has_value());
  EXPECT_EQ(info->buffer->kind, "ola");
  ExpectTree(*info->buffer, **ba);
  const OlaFile* ola = OlaOf(**ba);
  ASSERT_NE(ola, nullptr);
  ASSERT_TRUE(info->buffer->ola.has_value());
  const BufferDescription::Ola& o = *info->buffer->ola;
  EXPECT_EQ(o.nodes, 4);
  EXPECT_EQ(o.max_order, 3);
  EXPECT_EQ(o.bin, ola->layout().bin());
  EXPECT_EQ(o.levels, ola->layout().levels());
  EXPECT_EQ(o.slots, ola->layout().slots());
  EXPECT_EQ(o.file_bytes, ola->file_bytes());
  EXPECT_EQ(o.growth, static_cast<double>(ola->layout().growth()));
  ba->reset();
  // An Ola file that does not open: the next command rebuilds the buffer, so
  // there is nothing in place to describe.
  std::ofstream(path + ".momenta/ola", std::ios::trunc) << "not an Ola buffer";
  auto damaged = BufferedArray::Describe(path, Options(4, false));
  ASSERT_OK(damaged);
  EXPECT_EQ(damaged->condition.kind, BufferCondition::Kind::kRebuild) << damaged->condition.why;
  EXPECT_FALSE(damaged->buffer.has_value());
}

}  // namespace
}  // namespace momenta
