// A damaged moment buffer never answers wrongly: every kind of damage to the
// tree file (header bytes zeroed or flipped, each header field changed, node
// bytes zeroed or flipped, a parent's mask changed, the file truncated or
// extended) is found by MomentTree::Open or by the query that reads the
// damaged part, and any query that does answer gives exactly the undamaged
// answer. A fixed list first, then a seeded random flip loop over a small
// sparse tree (disk and RAM tiers, written nodes and holes).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/range_query.h"
#include "buffers/tree/tree_build.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ReadFileBytes;
using testing::ScratchDir;
using testing::WriteFileBytes;

constexpr uint64_t kN = 16384;  // 128 KiB of f8: leaves of one page, most of them holes

IoOptions PreadIo() {
  IoOptions io;
  io.kind = IoKind::kPread;
  return io;
}

bool Same(long double a, long double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

bool SameSummary(const RangeSummary& a, const RangeSummary& b) {
  if (a.count() != b.count() || !(a.nonfinite == b.nonfinite) || a.exact_sum != b.exact_sum) return false;
  for (int j = 0; j <= a.index.order(); ++j)
    if (!Same(a.index.moment(j), b.index.moment(j))) return false;
  return a.values.count() == b.values.count() && Same(a.values.shift(), b.values.shift()) &&
         Same(a.values.sum_of_deviations(), b.values.sum_of_deviations()) &&
         Same(a.values.sum_of_squared_deviations(), b.values.sum_of_squared_deviations()) &&
         Same(a.extremes.min, b.extremes.min) && Same(a.extremes.max, b.extremes.max);
}

struct Query {
  uint64_t p, q;
  bool need_extremes;
};

// A sparse f8 array (data in a few regions, NaN and infinities included) and
// its clean tree: J = 2, leaf 512, fan-out 4 (32, 8, 2 nodes), a RAM budget
// that keeps only the top level in RAM.
class TreeDamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    array_path_ = dir_.File("a.npy");
    IoOptions io = PreadIo();
    io.writable = true;
    const uint64_t shape[] = {kN};
    auto f = ArrayFile::Create(array_path_, DType::kF8, shape, io);
    ASSERT_OK(f);
    std::vector<Value> values;
    for (uint64_t i = 0; i < 200; ++i) values.push_back(Value::Float(i % 17 == 0 ? std::nan("") : 0.5 * i - 7));
    ASSERT_OK((*f)->WriteValues(1000, values));  // leaves 1, 2
    values.assign(40, Value::Float(3.25));
    values[5] = Value::Float(INFINITY);
    ASSERT_OK((*f)->WriteValues(9000, values));  // leaf 17
    ASSERT_OK((*f)->Sync());
    f->reset();
    auto array = ArrayFile::Open(array_path_, PreadIo());
    ASSERT_OK(array);
    array_ = std::move(array).value();

    pristine_path_ = dir_.File("pristine.tree");
    TreeOptions options;
    options.order = 2;
    options.leaf_span = 512;
    options.fanout = 4;
    options.ram_budget = 4 * NodeCodec(2).bytes();
    auto tree = MomentTree::Create(pristine_path_, *array_, options, PreadIo());
    ASSERT_OK(tree);
    ASSERT_OK(BuildTree(*array_, **tree));
    (*tree)->MarkClean();
    ASSERT_OK((*tree)->Flush());
    layout_ = (*tree)->layout();
    ASSERT_EQ(layout_.levels(), 3);
    ASSERT_EQ(layout_.ram_from(), 3);
    // Queries: every node's own range (which takes that node), the whole
    // array, and ranges with partial leaves read both ways.
    for (int level = 1; level <= layout_.levels(); ++level)
      for (uint64_t j = 0; j < layout_.nodes(level); ++j)
        queries_.push_back({layout_.node_first(level, j), layout_.node_end(level, j), true});
    queries_.push_back({0, kN, true});
    std::mt19937_64 rng(7);
    for (int k = 0; k < 30; ++k) {
      uint64_t p = rng() % (kN + 1), q = rng() % (kN + 1);
      if (p > q) std::swap(p, q);
      queries_.push_back({p, q, k % 2 == 0});
    }
    for (const Query& qu : queries_) {
      auto s = SummarizeRange(**tree, *array_, qu.p, qu.q, qu.need_extremes);
      ASSERT_OK(s);
      answers_.push_back(*s);
    }
    pristine_ = ReadFileBytes(pristine_path_);
    // The fixture must hold both kinds of node.
    const NodeCodec codec(2);
    int holes = 0, written = 0;
    for (uint64_t k = 0; k < layout_.total_nodes(); ++k)
      (codec.Check(reinterpret_cast<const double*>(pristine_.data() + kTreeHeaderBytes + k * codec.bytes())) == 0
           ? holes
           : written)++;
    ASSERT_GT(holes, 20);
    ASSERT_GT(written, 4);
  }

  // Writes `bytes` as the tree file, opens it and runs every query. True
  // when the damage was found (Open or a query failed); fails the test if a
  // query answered differently from the undamaged tree. `must_use` (level,
  // node), when given, names a node whose own-range query must fail.
  bool Detected(const std::string& bytes, const std::string& what, int must_level = 0, uint64_t must_node = 0) {
    SCOPED_TRACE(what);
    const std::string path = dir_.File("tree");
    WriteFileBytes(path, bytes);
    auto tree = MomentTree::Open(path, /*writable=*/false, PreadIo());
    if (!tree.ok()) {
      EXPECT_NE(tree.status().ToString().find(path), std::string::npos) << tree.status().ToString();
      return true;
    }
    bool found = false;
    for (size_t k = 0; k < queries_.size(); ++k) {
      const Query& qu = queries_[k];
      auto s = SummarizeRange(**tree, *array_, qu.p, qu.q, qu.need_extremes);
      if (!s.ok()) {
        found = true;
        EXPECT_EQ(s.status().code(), Status::Code::kCorruption) << s.status().ToString();
        EXPECT_NE(s.status().ToString().find(" fails its check"), std::string::npos) << s.status().ToString();
        continue;
      }
      EXPECT_TRUE(SameSummary(*s, answers_[k])) << "a wrong answer for " << qu.p << ":" << qu.q;
      if (must_level > 0 && qu.need_extremes && qu.p == layout_.node_first(must_level, must_node) &&
          qu.q == layout_.node_end(must_level, must_node) && k < layout_.total_nodes())
        ADD_FAILURE() << "the query over node " << must_node << " of level " << must_level
                      << " answered from damaged bytes";
    }
    return found;
  }

  uint64_t NodeOffset(int level, uint64_t j) const {
    return kTreeHeaderBytes + (layout_.node_base(level) + j) * NodeCodec(2).bytes();
  }
  // The first written / hole node of a level.
  uint64_t FindNode(int level, bool written) const {
    const NodeCodec codec(2);
    for (uint64_t j = 0; j < layout_.nodes(level); ++j)
      if ((codec.Check(reinterpret_cast<const double*>(pristine_.data() + NodeOffset(level, j))) != 0) == written)
        return j;
    ADD_FAILURE() << "no such node at level " << level;
    return 0;
  }

  ScratchDir dir_;
  std::string array_path_, pristine_path_, pristine_;
  std::unique_ptr<ArrayFile> array_;
  TreeLayout layout_;
  std::vector<Query> queries_;
  std::vector<RangeSummary> answers_;
};

TEST_F(TreeDamageTest, UndamagedAnswersAndIsNotFlagged) { EXPECT_FALSE(Detected(pristine_, "no damage")); }

TEST_F(TreeDamageTest, HeaderBytesZeroedOrFlipped) {
  std::string b = pristine_;
  std::memset(b.data(), 0, kTreeHeaderBytes);
  EXPECT_TRUE(Detected(b, "header page zeroed"));
  for (uint64_t at : {0u, 9u, 17u, 100u, 200u, 4000u}) {
    b = pristine_;
    b[at] ^= 0x10;
    EXPECT_TRUE(Detected(b, "header byte " + std::to_string(at) + " flipped"));
  }
}

TEST_F(TreeDamageTest, EachHeaderFieldChanged) {
  struct Field {
    const char* name;
    size_t offset, size;
  };
  const Field fields[] = {
      {"magic", offsetof(TreeFileHeader, magic), 8},
      {"version", offsetof(TreeFileHeader, version), 4},
      {"state", offsetof(TreeFileHeader, state), 4},
      {"order", offsetof(TreeFileHeader, order), 4},
      {"fanout", offsetof(TreeFileHeader, fanout), 4},
      {"leaf_span", offsetof(TreeFileHeader, leaf_span), 8},
      {"ram_budget", offsetof(TreeFileHeader, ram_budget), 8},
      {"disk_tier", offsetof(TreeFileHeader, disk_tier), 4},
      {"node_bytes", offsetof(TreeFileHeader, node_bytes), 4},
      {"length", offsetof(TreeFileHeader, length), 8},
      {"dtype", offsetof(TreeFileHeader, dtype), 4},
      {"ola_nodes", offsetof(TreeFileHeader, ola_nodes), 4},
      {"array identity", offsetof(TreeFileHeader, array), 40},
      {"log_sequence", offsetof(TreeFileHeader, log_sequence), 8},
      {"updates_since_build", offsetof(TreeFileHeader, updates_since_build), 8},
      {"checkpoint_sequence", offsetof(TreeFileHeader, checkpoint_sequence), 8},
      {"write_epoch", offsetof(TreeFileHeader, write_epoch), 8},
      {"ola_bin", offsetof(TreeFileHeader, ola_bin), 4},
      {"params_crc", offsetof(TreeFileHeader, params_crc), 4},
      {"clean_crc", offsetof(TreeFileHeader, clean_crc), 4},
      {"top_mask", offsetof(TreeFileHeader, top_mask), 8},
  };
  for (const Field& f : fields) {
    for (uint64_t delta : {uint64_t{1}, uint64_t{2}, uint64_t{1} << 20}) {
      std::string b = pristine_;
      uint64_t v = 0;
      std::memcpy(&v, b.data() + f.offset, std::min<size_t>(f.size, 8));
      v += delta;
      std::memcpy(b.data() + f.offset, &v, std::min<size_t>(f.size, 8));
      const bool found = Detected(b, std::string("header field ") + f.name + " + " + std::to_string(delta));
      // state 1 (clean) + 1 or + 2 is another valid state (updating,
      // retired): not damage that can be told, and no wrong answer (Detected
      // checks): the owner replays the log into it or reopens.
      if (std::string(f.name) != "state" || delta > 2) {
        EXPECT_TRUE(found) << f.name << " + " << delta;
      }
    }
  }
  // The epoch made odd (a writer "mid-chunk") in a clean header: named.
  std::string b = pristine_;
  b[offsetof(TreeFileHeader, write_epoch)] ^= 1;
  WriteFileBytes(dir_.File("tree"), b);
  auto tree = MomentTree::Open(dir_.File("tree"), false, PreadIo());
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().ToString(),
            "Corruption: " + dir_.File("tree") + ": header field write_epoch 1 is odd in a clean buffer");
}

TEST_F(TreeDamageTest, NodeBytesZeroedOrFlipped) {
  const size_t nb = NodeCodec(2).bytes();
  for (int level = 1; level <= layout_.levels(); ++level) {
    const uint64_t j = FindNode(level, /*written=*/true);
    const uint64_t at = NodeOffset(level, j);
    const std::string where = " of node " + std::to_string(j) + " of level " + std::to_string(level);
    std::string b = pristine_;
    std::memset(b.data() + at, 0, nb);
    EXPECT_TRUE(Detected(b, "all bytes zeroed" + where, level, j));
    b = pristine_;
    std::memset(b.data() + at, 0, nb / 2);
    EXPECT_TRUE(Detected(b, "first half zeroed" + where, level, j));
    b = pristine_;
    std::memset(b.data() + at + nb - 8, 0, 8);
    EXPECT_TRUE(Detected(b, "check zeroed" + where, level, j));
    for (size_t k : {size_t{0}, size_t{8 * 7}, nb - 9, nb - 1}) {
      b = pristine_;
      b[at + k] ^= 0x01;
      EXPECT_TRUE(Detected(b, "byte " + std::to_string(k) + " flipped" + where, level, j));
    }
    if (level < layout_.levels()) {
      // A hole given bytes, and a written node's record in its parent cleared.
      const uint64_t h = FindNode(level, /*written=*/false);
      b = pristine_;
      b[NodeOffset(level, h) + 3] = 0x40;
      EXPECT_TRUE(
          Detected(b, "hole " + std::to_string(h) + " of level " + std::to_string(level) + " given a byte", level, h));
      b = pristine_;
      b[NodeOffset(level + 1, j / layout_.fanout()) + nb - 16] ^= static_cast<char>(1 << (j % layout_.fanout()));
      EXPECT_TRUE(Detected(b, "mask bit cleared in the parent" + where, level + 1, j / layout_.fanout()));
    }
  }
  // The whole node region zeroed: every written node reads as a hole.
  std::string b = pristine_;
  std::memset(b.data() + kTreeHeaderBytes, 0, b.size() - kTreeHeaderBytes);
  EXPECT_TRUE(Detected(b, "every node zeroed"));
}

TEST_F(TreeDamageTest, TruncatedOrExtended) {
  const size_t nb = NodeCodec(2).bytes();
  for (size_t cut : {size_t{1}, nb, pristine_.size() - 5000, pristine_.size() - kTreeHeaderBytes}) {
    EXPECT_TRUE(Detected(pristine_.substr(0, pristine_.size() - cut), "truncated by " + std::to_string(cut)));
  }
  EXPECT_TRUE(Detected(pristine_.substr(0, 100), "truncated into the header"));
  for (size_t grow : {size_t{1}, nb, size_t{4096}})
    EXPECT_TRUE(Detected(pristine_ + std::string(grow, '\0'), "extended by " + std::to_string(grow)));
}

// Header fields that may change under a clean header (or matter only while
// it is not clean) are not sealed: flipping them changes no answer. The
// state is the writer's to change: a clean state flipped to another valid
// one (building, updating, retired) still opens here, its nodes still pass
// their checks, and BufferedArray rebuilds or recovers the buffer for it
// (buffer_open.cc); only a value that is no state is refused.
bool Unsealed(uint64_t at, const std::string& bytes) {
  auto in = [&](size_t offset, size_t size) { return at >= offset && at < offset + size; };
  if (in(offsetof(TreeFileHeader, state), 4)) {
    uint32_t state;
    std::memcpy(&state, bytes.data() + offsetof(TreeFileHeader, state), sizeof state);
    return state <= kTreeRetired;
  }
  return in(offsetof(TreeFileHeader, reader_wait_until_ns), 8) || in(offsetof(TreeFileHeader, boot_id), 8) ||
         in(offsetof(TreeFileHeader, durable_marks), 4) || in(offsetof(TreeFileHeader, chunk_first_sequence), 8);
}

TEST_F(TreeDamageTest, RandomFlipsAreFoundOrHarmless) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (MOMENTA_SEED=" + std::to_string(seed) + " reproduces)");
  std::mt19937_64 rng(seed);
  const size_t nb = NodeCodec(2).bytes();
  for (int round = 0; round < 200; ++round) {
    std::string b = pristine_;
    const uint64_t at =
        rng() % 3 == 0 ? rng() % sizeof(TreeFileHeader) : kTreeHeaderBytes + rng() % (b.size() - kTreeHeaderBytes);
    b[at] ^= static_cast<char>(1 + rng() % 255);
    const std::string what = "round " + std::to_string(round) + ": byte " + std::to_string(at) + " changed";
    if (at < kTreeHeaderBytes) {
      const bool found = Detected(b, what);
      if (!Unsealed(at, b)) {
        EXPECT_TRUE(found) << what;
      }
      continue;
    }
    // The node holding the byte: its own-range query must not answer.
    const uint64_t slot = (at - kTreeHeaderBytes) / nb;
    int level = layout_.levels();
    while (layout_.node_base(level) > slot) --level;
    EXPECT_TRUE(Detected(b, what, level, slot - layout_.node_base(level))) << what;
    if (::testing::Test::HasFailure()) return;
  }
}

// Through BufferedArray: a clean tree whose epoch was made odd no longer
// makes a query wait forever; the buffer is rebuilt and answers.
TEST_F(TreeDamageTest, OddEpochIsRebuiltNotWaitedOn) {
  std::filesystem::create_directory(array_path_ + ".momenta");
  const std::string tree_path = array_path_ + ".momenta/tree";
  BufferedArrayOptions options;
  options.io = PreadIo();
  {
    auto ba = BufferedArray::Open(array_path_, options);  // builds it
    ASSERT_OK(ba);
  }
  std::string b = ReadFileBytes(tree_path);
  b[offsetof(TreeFileHeader, write_epoch)] ^= 1;
  WriteFileBytes(tree_path, b);
  std::vector<std::string> notices;
  auto ba = BufferedArray::Open(array_path_, options, &notices);
  ASSERT_OK(ba);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices.back().find("write_epoch"), std::string::npos) << notices.back();
  auto s = (*ba)->Summarize(0, kN, true);
  ASSERT_OK(s);
  const RangeSummary& want = answers_[layout_.total_nodes()];  // from the fixture's own tree
  EXPECT_EQ(s->nonfinite, want.nonfinite);
  EXPECT_EQ(s->values.count(), want.values.count());
  EXPECT_NEAR(static_cast<double>(s->index.moment(0)), static_cast<double>(want.index.moment(0)), 1e-9);
}

// A node is checked once per write_epoch (MomentTree::VerifyNodeOnce): damage
// that lands after a first good read, with no writer's chunk in between, is
// not looked for again at that epoch (what the warm query saves), but is
// caught as soon as the epoch moves, and by a reader that opens the file anew.
TEST_F(TreeDamageTest, DamageAfterAFirstGoodReadIsCaughtWhenTheEpochMoves) {
  const std::string path = dir_.File("tree");
  WriteFileBytes(path, pristine_);
  auto tree = MomentTree::Open(path, /*writable=*/false, PreadIo());
  ASSERT_OK(tree);
  const uint64_t j = FindNode(1, /*written=*/true);
  const uint64_t p = layout_.node_first(1, j), q = layout_.node_end(1, j);
  ASSERT_OK(SummarizeRange(**tree, *array_, p, q, /*need_extremes=*/true));

  // One byte of the node flipped in the file (the mapping shares its page).
  auto store = [&](uint64_t at, const void* bytes, size_t n) {
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes, n, static_cast<off_t>(at)), static_cast<ssize_t>(n));
    ::close(fd);
  };
  const char flipped = static_cast<char>(pristine_[NodeOffset(1, j) + 8] ^ 0x10);
  store(NodeOffset(1, j) + 8, &flipped, 1);
  EXPECT_TRUE(SummarizeRange(**tree, *array_, p, q, true).ok()) << "checked again at the same epoch";

  // A writer's chunk moves the epoch by two: the node is checked again.
  const uint64_t epoch = (*tree)->ReadEpoch() + 2;
  store(offsetof(TreeFileHeader, write_epoch), &epoch, sizeof epoch);
  ASSERT_EQ((*tree)->ReadEpoch(), epoch);
  auto moved = SummarizeRange(**tree, *array_, p, q, true);
  ASSERT_FALSE(moved.ok()) << "damage after the epoch moved was answered from";
  EXPECT_NE(moved.status().ToString().find(" fails its check"), std::string::npos) << moved.status().ToString();

  // And a reader that opens the file anew checks it on its first read.
  store(offsetof(TreeFileHeader, write_epoch), &pristine_[offsetof(TreeFileHeader, write_epoch)], sizeof epoch);
  auto reopened = MomentTree::Open(path, false, PreadIo());
  ASSERT_OK(reopened);
  EXPECT_FALSE(SummarizeRange(**reopened, *array_, p, q, true).ok());
}

// A written node copied whole over another place (a misdirected write) holds
// bytes that match their own check; format 3's check binds the place, so it
// fails there. (Found by the `tree` fuzz target: format 2 answered from it.)
TEST_F(TreeDamageTest, NodeCopiedToAnotherPlace) {
  std::string b = pristine_;
  const size_t n = NodeCodec(2).bytes();
  std::memcpy(b.data() + NodeOffset(1, 1), pristine_.data() + NodeOffset(1, 17), n);
  EXPECT_TRUE(Detected(b, "leaf 17 copied over leaf 1", 1, 1));
  b = pristine_;
  std::memcpy(b.data() + NodeOffset(1, 5), pristine_.data() + NodeOffset(1, 1), n);  // over a hole
  EXPECT_TRUE(Detected(b, "leaf 1 copied over hole leaf 5", 1, 5));
}

// The header's top_mask is sealed only while the header is clean. A header
// left "updating" (a writer stopped mid-update, or its state byte damaged)
// with a written top node zeroed and its top_mask bit cleared must not pass
// the zeros off as a hole: the reader's recovery sees data below the hole
// and rebuilds. (Found by the `tree` fuzz target.)
TEST_F(TreeDamageTest, RecoveryDoesNotSealAZeroedTopNodeAsAHole) {
  BufferedArrayOptions options;
  options.io = PreadIo();
  options.io.writable = true;
  options.sync = LogSync::kNone;
  options.sidecar = dir_.File("sidecar");
  options.tree.order = 2;
  options.tree.leaf_span = 512;
  options.tree.fanout = 4;
  options.tree.ram_budget = 4 * NodeCodec(2).bytes();
  {
    auto ba = BufferedArray::Open(array_path_, options);  // builds the fixture's tree
    ASSERT_OK(ba);
    ASSERT_OK((*ba)->Close());
  }
  const std::string tree_path = options.sidecar + "/tree";
  std::string b = ReadFileBytes(tree_path);
  TreeFileHeader h;
  std::memcpy(&h, b.data(), sizeof h);
  ASSERT_EQ(h.top_mask & 1, 1u);
  h.state = kTreeUpdating;
  h.top_mask &= ~uint64_t{1};
  std::memcpy(b.data(), &h, sizeof h);
  const int top = layout_.levels();
  std::memset(b.data() + NodeOffset(top, 0), 0, NodeCodec(2).bytes());
  WriteFileBytes(tree_path, b);

  options.io.writable = false;  // a reader that may write: it recovers
  std::vector<std::string> notices;
  auto ba = BufferedArray::Open(array_path_, options, &notices);
  ASSERT_OK(ba);
  bool rebuilt = false;
  for (const std::string& n : notices) rebuilt |= n.find("a hole with data below it") != std::string::npos;
  EXPECT_TRUE(rebuilt) << (notices.empty() ? "no notice" : notices.back());
  auto s = (*ba)->Summarize(layout_.node_first(top, 0), layout_.node_end(top, 0), true);
  ASSERT_OK(s);
  EXPECT_TRUE(SameSummary(*s, answers_[layout_.node_base(top)])) << "answered from the zeroed node";
}

}  // namespace
}  // namespace momenta
