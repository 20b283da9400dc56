// IoBackend::ReadStream: a long list of reads streamed to a consumer on
// another thread through a ReadFlow, for every backend. Each destination is
// reused (a ring of buffers, as a build's chunks), so a request queued before
// the consumer allowed it would overwrite bytes the consumer has not checked.
#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "storage/io/io_backend.h"
#include "storage/io/read_flow.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

using testing::ScratchDir;

class ReadStreamTest : public ::testing::TestWithParam<IoKind> {
 protected:
  // A file of random bytes and its backend; skips when the backend cannot start.
  void SetUp() override {
    seed_ = testing::TestSeed();
    std::mt19937_64 rng(seed_);
    bytes_.resize(4 << 20);
    for (char& c : bytes_) c = static_cast<char>(rng());
    testing::WriteFileBytes(dir_.File("a"), bytes_);
    IoOptions o;
    o.kind = GetParam();
    o.queue_depth = 8;       // deeper than the ring of buffers: the flow, not the depth, must hold reads back
    o.direct_min_bytes = 0;  // aligned requests through O_DIRECT where the file system allows it
    auto io = OpenIoBackend(dir_.File("a"), o);
    if (!io.ok()) GTEST_SKIP() << io.status().ToString();
    io_ = std::move(io).value();
  }

  uint64_t seed_ = 0;
  ScratchDir dir_;
  std::string bytes_;
  std::unique_ptr<IoBackend> io_;
};

TEST_P(ReadStreamTest, StreamsThroughARingOfBuffers) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  constexpr size_t kSlots = 3, kSlotBytes = 64 << 10;
  std::vector<char, std::allocator<char>> storage(kSlots * kSlotBytes + 4096);
  char* base = storage.data() + (4096 - reinterpret_cast<uintptr_t>(storage.data()) % 4096) % 4096;
  std::mt19937_64 rng(seed_ + 1);
  std::vector<ReadRequest> requests;
  for (size_t i = 0, off = 0; off + kSlotBytes <= bytes_.size(); ++i) {
    const size_t len = i % 3 == 2 ? 1 + rng() % kSlotBytes : kSlotBytes;  // some not aligned: the page cache
    requests.push_back({off, len, base + (i % kSlots) * kSlotBytes});
    off += len;
  }
  ReadFlow flow;
  flow.Allow(kSlots);
  Status read;
  std::thread reader([&] { read = io_->ReadStream(requests, flow); });
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_TRUE(flow.WaitLanded(i + 1)) << "request " << i;
    const ReadRequest& r = requests[i];
    ASSERT_EQ(std::string(r.dest, r.length), bytes_.substr(r.offset, r.length)) << "request " << i;
    flow.Allow(i + 1 + kSlots);  // its slot is free for the request kSlots on
  }
  reader.join();
  ASSERT_OK(read);
}

TEST_P(ReadStreamTest, StopEndsTheStream) {
  std::vector<std::string> bufs(16, std::string(8192, '\0'));
  std::vector<ReadRequest> requests;
  for (size_t i = 0; i < bufs.size(); ++i) requests.push_back({i * 8192, 8192, bufs[i].data()});
  ReadFlow flow;
  flow.Allow(2);
  Status read;
  std::thread reader([&] { read = io_->ReadStream(requests, flow); });
  ASSERT_TRUE(flow.WaitLanded(2));
  flow.Stop();
  EXPECT_FALSE(flow.WaitLanded(3));  // never queued: the stream ended without it
  reader.join();
  EXPECT_OK(read);
  EXPECT_EQ(bufs[1], bytes_.substr(8192, 8192));
  EXPECT_EQ(bufs[2], std::string(8192, '\0'));
}

TEST_P(ReadStreamTest, ReadPastTheEndFails) {
  std::vector<std::string> bufs(6, std::string(8192, '\0'));
  std::vector<ReadRequest> requests;
  for (size_t i = 0; i < bufs.size(); ++i) requests.push_back({i * 8192, 8192, bufs[i].data()});
  requests[3].offset = bytes_.size() - 100;  // reaches 8092 bytes past the end
  ReadFlow flow;
  flow.Allow(requests.size());
  Status read;
  std::thread reader([&] { read = io_->ReadStream(requests, flow); });
  EXPECT_FALSE(flow.WaitLanded(requests.size()));
  reader.join();
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.ToString().find("runs past end of file"), std::string::npos) << read.ToString();
}

INSTANTIATE_TEST_SUITE_P(Backends, ReadStreamTest, ::testing::Values(IoKind::kUring, IoKind::kPread, IoKind::kMmap),
                         [](const auto& info) { return std::string(IoKindName(info.param)); });

}  // namespace
}  // namespace momenta
