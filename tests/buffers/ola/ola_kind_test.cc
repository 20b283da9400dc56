// Buffer kind ola through BufferedArray (buffers/ola/ola_file.h): answers within
// OlaBuffer's bound against a long-double reference, from the writer and from
// readers, after updates; a writer killed mid-update, a damaged block or
// header, an array changed outside momenta, and a rebuild to another kind all
// end in a buffer that answers right; non-finite updates are refused whole.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/ola/ola_file.h"
#include "buffers/tree/moment_tree.h"
#include "storage/array/array_file.h"
#include "tests/assert_ok.h"
#include "tests/buffers/ola/ola_reference.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 6000;

BufferedArrayOptions Options(int nodes, uint64_t bin, bool writable = true) {
  BufferedArrayOptions o;
  o.io.writable = writable;
  o.io.kind = IoKind::kPread;
  o.sync = LogSync::kBatch;
  o.tree.order = 0;
  o.tree.leaf_span = 256;
  o.tree.fanout = 4;
  o.tree.ola_nodes = nodes;
  o.tree.ola_bin = bin;
  return o;
}

// An f8 array of kLength random values (a hole of zeros in the middle), and
// the same values in long double.
std::vector<long double> MakeArray(const std::string& path, std::mt19937_64& rng) {
  IoOptions io;
  io.writable = true;
  const uint64_t shape[] = {kLength};
  auto f = ArrayFile::Create(path, DType::kF8, shape, io);
  EXPECT_OK(f);
  std::normal_distribution<double> normal(0, 100);
  std::vector<long double> a(kLength, 0.0L);
  std::vector<Value> values;
  for (uint64_t i = 0; i < kLength; ++i) {
    const double v = (i >= 2000 && i < 3000) ? 0.0 : normal(rng);
    a[i] = v;
    values.push_back(Value::Float(v));
  }
  EXPECT_OK((*f)->WriteValues(0, values));
  return a;
}

// Every moment of M_t(p, q) within the bound, for random ranges and the
// ranges at the ends.
void ExpectAnswers(BufferedArray& ba, const std::vector<long double>& a, const std::vector<long double>& mag,
                   std::mt19937_64& rng, int ranges) {
  ASSERT_NE(OlaOf(ba), nullptr);
  const OlaLayout& layout = OlaOf(ba)->layout();
  const int N = layout.nodes();
  for (int k = 0; k < ranges; ++k) {
    uint64_t p = rng() % (kLength + 1), q = rng() % (kLength + 1);
    if (k == 0) p = 0, q = kLength;
    if (k == 1) p = 0, q = 1;
    if (k == 2) p = kLength - 1, q = kLength;
    if (p > q) std::swap(p, q);
    auto got = ba.SummarizeIndex(p, q);
    ASSERT_OK(got);
    const auto want = testing::ReferenceMoments(a, p, q, N);
    const auto bound = testing::BoundMagnitudes(mag, layout, p, q);
    ASSERT_EQ(got->count(), q - p);
    for (int t = 0; t < N; ++t)
      ASSERT_LE(std::fabs(got->moment(t) - want[t]), 1e-9L * bound[t] + 1e-300L)
          << "M_" << t << "(" << p << ", " << q << ") = " << static_cast<double>(got->moment(t)) << ", exact "
          << static_cast<double>(want[t]);
  }
}

std::vector<long double> Magnitudes(const std::vector<long double>& a) {
  std::vector<long double> m(a.size());
  for (size_t i = 0; i < a.size(); ++i) m[i] = std::fabs(a[i]);
  return m;
}

TEST(OlaKindTest, AnswersWithinTheBoundFromWriterAndReader) {
  const uint64_t seed = testing::TestSeed();
  for (const auto& [nodes, bin] : std::vector<std::pair<int, uint64_t>>{{2, 4}, {4, 8}, {8, 5}, {4, 1024}}) {
    SCOPED_TRACE("N " + std::to_string(nodes) + " b " + std::to_string(bin));
    std::mt19937_64 rng(seed + nodes * 131 + bin);
    testing::ScratchDir dir;
    const std::string path = dir.File("a.npy");
    const auto a = MakeArray(path, rng);
    const auto mag = Magnitudes(a);
    {
      auto writer = BufferedArray::Open(path, Options(nodes, bin));
      ASSERT_OK(writer);
      ExpectAnswers(**writer, a, mag, rng, 200);
    }
    auto reader = BufferedArray::Open(path, Options(0, 0, /*writable=*/false));
    ASSERT_OK(reader);
    EXPECT_EQ(TreeOf(**reader).header().ola_nodes, static_cast<uint32_t>(nodes));
    ExpectAnswers(**reader, a, mag, rng, 200);
  }
}

TEST(OlaKindTest, UpdatesKeepAnswersWithinTheBound) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  auto a = MakeArray(path, rng);
  auto mag = Magnitudes(a);
  {
    auto writer = BufferedArray::Open(path, Options(4, 8));
    ASSERT_OK(writer);
    std::normal_distribution<double> normal(0, 1000);
    for (int batch = 0; batch < 20; ++batch) {
      std::vector<IndexedValue> updates;
      for (int k = 0; k < 500; ++k) {
        const uint64_t i = rng() % kLength;
        const double v = normal(rng);
        updates.push_back({i, Value::Float(v)});
        a[i] = v;
        mag[i] = std::max(mag[i], std::fabs(a[i]));
      }
      ASSERT_OK((*writer)->Apply(updates));
      ASSERT_OK((*writer)->Commit());
    }
    ExpectAnswers(**writer, a, mag, rng, 100);
    auto report = (*writer)->Verify();
    ASSERT_OK(report);
    EXPECT_EQ(report->mismatches, 0u) << (report->examples.empty() ? "" : report->examples[0]);
  }
  // After the writer closed: a reader finds the Ola buffer clean and current.
  std::vector<std::string> notices;
  auto reader = BufferedArray::Open(path, Options(0, 0, false), &notices);
  ASSERT_OK(reader);
  EXPECT_TRUE(notices.empty()) << notices[0];
  ExpectAnswers(**reader, a, mag, rng, 100);
}

// An array made and built as kind ola (N = 4, b = 8) before each test.
class OlaKindArrayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a = MakeArray(path, rng);
    mag = Magnitudes(a);
    auto writer = BufferedArray::Open(path, Options(4, 8));
    ASSERT_OK(writer);
  }
  std::mt19937_64 rng{testing::TestSeed()};
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  std::vector<long double> a, mag;
};

// A batch of index moments (SummarizeIndexBatch) reads the Ola buffer alone:
// the same numbers as one range at a time, the same cells read (none of the
// tree's partial leaves, which SummarizeBatch reads besides); refused for hbb.
TEST_F(OlaKindArrayTest, IndexBatchesReadTheOlaBufferAlone) {
  auto reader = BufferedArray::Open(path, Options(0, 0, /*writable=*/false));
  ASSERT_OK(reader);
  std::vector<IndexRange> ranges;
  for (int k = 0; k < 600; ++k) {  // more than one consistent chunk of 256
    uint64_t p = rng() % (kLength + 1), q = rng() % (kLength + 1);
    if (p > q) std::swap(p, q);
    ranges.push_back({p, q});
  }
  std::vector<IndexMoments> batch;
  std::vector<QueryCost> costs, full_costs;
  ASSERT_OK((*reader)->SummarizeIndexBatch(ranges, &batch, &costs));
  std::vector<RangeSummary> full;
  ASSERT_OK((*reader)->SummarizeBatch(ranges, false, &full, &full_costs));
  ASSERT_EQ(batch.size(), ranges.size());
  uint64_t batch_bytes = 0, full_bytes = 0;
  for (size_t k = 0; k < ranges.size(); ++k) {
    QueryCost one;
    auto single = (*reader)->SummarizeIndex(ranges[k].begin, ranges[k].end, nullptr, &one);
    ASSERT_OK(single);
    for (int t = 0; t <= single->order(); ++t) {
      EXPECT_EQ(batch[k].moment(t), single->moment(t)) << k << " t " << t;
      EXPECT_EQ(full[k].index.moment(t), single->moment(t)) << k << " t " << t;
    }
    EXPECT_EQ(costs[k].array_bytes, one.array_bytes) << k;
    batch_bytes += costs[k].array_bytes;
    full_bytes += full_costs[k].array_bytes;
  }
  EXPECT_LT(batch_bytes, full_bytes) << "the full summaries read the tree's partial leaves too";
  const IndexRange outside{0, kLength + 1};
  EXPECT_EQ((*reader)->SummarizeIndexBatch({&outside, 1}, &batch).code(), Status::Code::kOutOfRange);
  reader->reset();
  auto writer = BufferedArray::Open(path, Options(4, 8));
  ASSERT_OK(writer);
  TreeOptions hbb;
  hbb.order = 3;
  ASSERT_OK((*writer)->Rebuild(hbb));
  EXPECT_EQ((*writer)->SummarizeIndexBatch(ranges, &batch).code(), Status::Code::kInvalidArgument);
}

TEST_F(OlaKindArrayTest, NonFiniteUpdatesAreRefusedWhole) {
  auto writer = BufferedArray::Open(path, Options(4, 8));
  ASSERT_OK(writer);
  const uint64_t before = (*writer)->applied_sequence();
  const std::vector<IndexedValue> updates = {{1, Value::Float(5)}, {2, Value::Float(std::nan(""))}};
  const Status s = (*writer)->Apply(updates);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("not finite"), std::string::npos) << s.ToString();
  EXPECT_EQ((*writer)->applied_sequence(), before);
  ExpectAnswers(**writer, a, Magnitudes(a), rng, 20);
}

// After a killed writer: the next open replays rather than rebuilds (no full
// pass, no "rebuilding" notice), every slot matches a fresh build, and the
// answers are the array's as it is. Returns how many of the notices said the
// writer stopped mid-update.
int ExpectReplayedAfterAKill(const std::string& path, std::mt19937_64& rng, int ranges) {
  std::vector<std::string> notices;
  auto ba = BufferedArray::Open(path, Options(4, 8), &notices);
  EXPECT_OK(ba);
  if (!ba.ok()) return 0;
  EXPECT_FALSE((*ba)->open_report().full_pass) << (*ba)->open_report().full_pass_reason;
  int mid_update = 0;
  for (const auto& n : notices) {
    EXPECT_EQ(n.find("rebuilding"), std::string::npos) << n;
    mid_update += n.find("stopped mid-update") != std::string::npos;
  }
  auto verify = (*ba)->Verify();
  EXPECT_OK(verify);
  if (verify.ok()) {
    EXPECT_EQ(verify->mismatches, 0u) << (verify->examples.empty() ? "" : verify->examples[0]);
  }
  std::vector<double> cells(kLength);
  EXPECT_OK((*ba)->array().ReadDoubles(0, kLength, cells.data()));
  const std::vector<long double> a(cells.begin(), cells.end());
  ExpectAnswers(**ba, a, Magnitudes(a), rng, ranges);
  // The largest |a| held covers every cell as it is (progressive bounds after updates rest on it).
  double largest = 0;
  for (double v : cells) largest = std::max(largest, std::fabs(v));
  EXPECT_GE(OlaOf(**ba)->max_abs_held(), largest);
  return mid_update;
}

// A writer killed at random points (20 kills): the next open replays the log
// into the Ola buffer as into the tree (the record the writer was inside
// recomputed from the array: ola_file.h), never a full pass; answers equal
// the array as it is and every slot matches a fresh build (Verify).
TEST(OlaKindTest, AKilledWriterLeavesABufferThatAnswersRight) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  (void)MakeArray(path, rng);
  { ASSERT_OK(BufferedArray::Open(path, Options(4, 8))); }
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("kill " + std::to_string(round));
    const uint64_t child_seed = rng();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto ba = BufferedArray::Open(path, Options(4, 8));
      if (!ba.ok()) _exit(3);
      std::mt19937_64 r(child_seed);
      while (true) {
        std::vector<IndexedValue> batch;
        for (int k = 0; k < 50; ++k) batch.push_back({r() % kLength, Value::Float(static_cast<double>(r() % 1000))});
        if (!(*ba)->Apply(batch).ok() || !(*ba)->Commit().ok()) _exit(4);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
    ExpectReplayedAfterAKill(path, rng, 20);
  }
}

// A writer killed inside its chunks (large batches, 10 kills): recovery takes
// the path where the tree's log_sequence names the last record the Ola
// buffer holds whole and the next one is recomputed; no full pass, every
// slot matches a fresh build, and a sabotaged recompute is caught here.
TEST(OlaKindTest, AWriterKilledInsideAChunkIsReplayedNotRebuilt) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  testing::ScratchDir dir;
  const std::string path = dir.File("a.npy");
  (void)MakeArray(path, rng);
  { ASSERT_OK(BufferedArray::Open(path, Options(4, 8))); }
  int mid_update = 0;
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("kill " + std::to_string(round));
    const uint64_t child_seed = rng();
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(ready[0]);
      auto ba = BufferedArray::Open(path, Options(4, 8));
      if (!ba.ok()) _exit(3);
      std::mt19937_64 r(child_seed);
      bool told = false;
      while (true) {
        std::vector<IndexedValue> batch;
        for (int k = 0; k < 20000; ++k)
          batch.push_back({r() % kLength, Value::Float(static_cast<double>(r() % 1000) - 500)});
        if (!told) told = ::write(ready[1], "r", 1) == 1;
        if (!(*ba)->Apply(batch).ok()) _exit(4);
      }
    }
    ::close(ready[1]);
    char c;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 30000));
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
    mid_update += ExpectReplayedAfterAKill(path, rng, 10);
  }
  EXPECT_GE(mid_update, 5) << "most kills should land inside a chunk";
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c ^= 0x10;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

TEST_F(OlaKindArrayTest, DamageIsFoundAndRebuilt) {
  const std::string ola = path + ".momenta/ola";
  {
    // A slot's byte: found by the query that reads its block, which rebuilds.
    auto reader = BufferedArray::Open(path, Options(0, 0, false));
    ASSERT_OK(reader);
    const OlaLayout& layout = OlaOf(**reader)->layout();
    const uint64_t top_slot = layout.SlotOf(layout.levels(), 1);
    const uint64_t file_bytes = std::filesystem::file_size(ola);
    const uint64_t slots_bytes = (layout.slots() * 8 + 4095) / 4096 * 4096;
    FlipByte(ola, file_bytes - slots_bytes + top_slot * 8 + 6);
    ExpectAnswers(**reader, a, mag, rng, 5);
    bool said = false;
    for (const auto& n : (*reader)->TakeNotices()) said = said || n.find("fails its check") != std::string::npos;
    EXPECT_TRUE(said);
  }
  // The header: found when the array opens.
  FlipByte(ola, 20);
  std::vector<std::string> notices;
  auto reader = BufferedArray::Open(path, Options(0, 0, false), &notices);
  ASSERT_OK(reader);
  ASSERT_FALSE(notices.empty());
  EXPECT_NE(notices[0].find("Ola"), std::string::npos) << notices[0];
  ExpectAnswers(**reader, a, mag, rng, 20);
}

TEST_F(OlaKindArrayTest, AnArrayChangedOutsideIsRebuilt) {
  {
    IoOptions io;
    io.writable = true;
    auto f = ArrayFile::Open(path, io);
    ASSERT_OK(f);
    const std::vector<Value> v = {Value::Float(12345.0)};
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a later mtime
    ASSERT_OK((*f)->WriteValues(77, v));
    a[77] = 12345.0;
  }
  auto reader = BufferedArray::Open(path, Options(0, 0, false));
  ASSERT_OK(reader);
  ExpectAnswers(**reader, a, Magnitudes(a), rng, 50);
}

TEST_F(OlaKindArrayTest, ARebuildChangesTheKind) {
  auto writer = BufferedArray::Open(path, Options(4, 8));
  ASSERT_OK(writer);
  ASSERT_NE(OlaOf(**writer), nullptr);
  TreeOptions hbb;
  hbb.order = 3;
  ASSERT_OK((*writer)->Rebuild(hbb));
  EXPECT_EQ(OlaOf(**writer), nullptr);
  EXPECT_FALSE(std::filesystem::exists(path + ".momenta/ola"));
  EXPECT_FALSE((*writer)->SummarizeIndex(0, 10).ok());
  TreeOptions ola = Options(8, 16).tree;
  ASSERT_OK((*writer)->Rebuild(ola));
  ASSERT_NE(OlaOf(**writer), nullptr);
  EXPECT_EQ(OlaOf(**writer)->layout().nodes(), 8);
  ExpectAnswers(**writer, a, Magnitudes(a), rng, 50);
}

}  // namespace
}  // namespace momenta
