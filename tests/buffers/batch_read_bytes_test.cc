// What a batch of queries reports it read is what its backends were asked
// for: SummarizeRanges' `read` (and BufferedArray::SummarizeBatch's, and a
// single Summarize's cost) equals the bytes and requests a counting backend
// saw, for batches whose ranges overlap, touch, repeat and cover one element
// each; and for those it is at most the array's size, where the ranges' own
// reads summed count the shared pages many times over.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "buffers/buffered_array.h"
#include "buffers/buffered_array_parts.h"
#include "buffers/tree/range_query.h"
#include "storage/array/array_file.h"
#include "storage/io/io_backend.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

constexpr uint64_t kLength = 40'000;  // f8: 320,000 bytes of data

// A backend that counts what it is asked to read, then asks `inner`.
class CountingBackend : public IoBackend {
 public:
  explicit CountingBackend(std::unique_ptr<IoBackend> inner) : IoBackend(inner->path()), inner_(std::move(inner)) {}
  std::string Name() const override { return "counting " + inner_->Name(); }
  Status Read(uint64_t offset, size_t length, char* dest) override {
    bytes += length;
    requests += 1;
    return inner_->Read(offset, length, dest);
  }
  Status ReadBatch(std::span<const ReadRequest> requests_in) override {
    for (const ReadRequest& r : requests_in) {
      bytes += r.length;
      requests += 1;
    }
    return inner_->ReadBatch(requests_in);
  }
  Status ReadBatchWith(std::span<const ReadRequest> mine, IoBackend& other,
                       std::span<const ReadRequest> theirs) override {
    MOMENTA_RETURN_IF_ERROR(ReadBatch(mine));
    return other.ReadBatch(theirs);
  }
  Status Write(uint64_t, std::span<const char>) override { return Status::NotSupported(path(), "read only"); }
  Status Allocate(uint64_t, uint64_t) override { return Status::NotSupported(path(), "read only"); }
  Status Sync() override { return Status::OK(); }
  Result<uint64_t> Size() override { return inner_->Size(); }

  uint64_t bytes = 0, requests = 0;

 private:
  std::unique_ptr<IoBackend> inner_;
};

std::unique_ptr<CountingBackend> Counting(const std::string& path) {
  IoOptions io;
  io.kind = IoKind::kPread;
  auto b = OpenIoBackend(path, io);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return std::make_unique<CountingBackend>(std::move(b).value());
}

class BatchReadBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = testing::TestSeed();
    path_ = dir_.File("a.npy");
    IoOptions io;
    io.writable = true;
    const uint64_t shape[] = {kLength};
    auto array = ArrayFile::Create(path_, DType::kF8, shape, io);
    ASSERT_OK(array);
    std::mt19937_64 rng(seed_);
    std::vector<Value> v(kLength);
    for (auto& x : v) x = Value::Float(std::normal_distribution<double>(3.0, 50.0)(rng));
    ASSERT_OK((*array)->WriteValues(0, v));
    BufferedArrayOptions options;
    options.io.writable = true;
    options.tree.leaf_span = 128;  // 1 KiB leaves: four share a page
    options.tree.fanout = 4;
    options.tree.ram_budget = 4096;  // most levels in the disk tier
    ASSERT_OK(BufferedArray::Open(path_, options));
    BufferedArrayOptions reader;
    reader.io.kind = IoKind::kPread;
    reader.io.map_resident = false;  // every piece read, so reads are what is counted
    auto ba = BufferedArray::Open(path_, reader);
    ASSERT_OK(ba);
    ba_ = std::move(ba).value();
  }

  // The batches: one element per range, overlapping ranges, repeats,
  // adjacent bins, random ranges.
  std::vector<std::vector<IndexRange>> Batches() const {
    std::vector<std::vector<IndexRange>> out(5);
    for (uint64_t i = 0; i < kLength; i += 3) out[0].push_back({i, i + 1});
    for (uint64_t k = 0; k < 200; ++k) out[1].push_back({k * 37 + 3, kLength - k * 29 - 5});
    out[2].assign(100, IndexRange{1000, 30001});
    for (uint64_t e = 0; e + 700 <= kLength; e += 700) out[3].push_back({e, e + 700});
    std::mt19937_64 rng(seed_ + 1);
    for (int k = 0; k < 300; ++k) {
      IndexRange r{rng() % (kLength + 1), rng() % (kLength + 1)};
      if (r.begin > r.end) std::swap(r.begin, r.end);
      out[4].push_back(r);
    }
    return out;
  }

  uint64_t seed_ = 0;
  testing::ScratchDir dir_;
  std::string path_;
  std::unique_ptr<BufferedArray> ba_;
};

TEST_F(BatchReadBytesTest, ReadIsWhatTheBackendsWereAsked) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  int n = 0;
  for (const auto& ranges : Batches()) {
    SCOPED_TRACE("batch " + std::to_string(n++) + " of " + std::to_string(ranges.size()) + " ranges");
    for (bool extremes : {false, true}) {
      auto array_io = Counting(path_);
      auto tree_io = Counting(TreeOf(*ba_).path());
      ReadArena arena;
      std::vector<RangeSummary> out;
      std::vector<QueryCost> costs;
      QueryCost read;
      ASSERT_OK(SummarizeRanges(TreeOf(*ba_), ba_->array(), ranges, extremes, &out, &costs,
                                QueryIo{array_io.get(), tree_io.get(), &arena}, &read));
      EXPECT_EQ(read.array_bytes, array_io->bytes);
      EXPECT_EQ(read.tier_bytes, tree_io->bytes);
      EXPECT_EQ(read.requests, array_io->requests + tree_io->requests);
      EXPECT_LE(read.array_bytes, kLength * 8) << "a batch reads no page of the array twice";
      uint64_t own = 0;
      for (const QueryCost& c : costs) own += c.array_bytes;
      EXPECT_GE(own, read.array_bytes);
    }
  }
}

// Through the facade: a batch's `read` and one query's cost are the merged
// reads, as SummarizeRanges gives them.
TEST_F(BatchReadBytesTest, TheFacadeReportsTheMergedReads) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  // 256 ranges of one element, 3 apart (one batch): 6 KiB of the array.
  const std::vector<IndexRange> all = Batches()[0];
  const std::vector<IndexRange> bins(all.begin(), all.begin() + 256);
  std::vector<RangeSummary> out;
  QueryCost read;
  ASSERT_OK(ba_->SummarizeBatch(bins, false, &out, nullptr, nullptr, &read));
  EXPECT_EQ(read.array_bytes, 8192u);  // before merging: a page per range, 1 MiB
  EXPECT_EQ(read.requests, 1u);
  // [10, 300): its end pieces, [0, 10) (the shorter side of [10, 128), taken
  // from leaf 0) and [256, 300), lie in one page: read once.
  QueryCost one;
  ASSERT_OK(ba_->Summarize(10, 300, false, &one));
  EXPECT_EQ(one.array_bytes, 4096u);
  auto array_io = Counting(path_);
  auto tree_io = Counting(TreeOf(*ba_).path());
  const IndexRange r{10, 300};
  std::vector<RangeSummary> direct;
  QueryCost counted;
  ASSERT_OK(SummarizeRanges(TreeOf(*ba_), ba_->array(), {&r, 1}, false, &direct, nullptr,
                            QueryIo{array_io.get(), tree_io.get(), nullptr}, &counted));
  EXPECT_EQ(one.array_bytes, array_io->bytes);
  EXPECT_EQ(one.tier_bytes, tree_io->bytes);
  EXPECT_EQ(one.requests, array_io->requests + tree_io->requests);
}

}  // namespace
}  // namespace momenta
