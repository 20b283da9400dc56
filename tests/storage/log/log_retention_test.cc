// --retain: at a checkpoint, whole log segments older than the retention
// window are deleted; the array and its buffer are untouched, and without a
// retention the whole log stays.
#include <gtest/gtest.h>

#include "buffers/buffered_array.h"
#include "buffers/tree/moment_tree.h"
#include "storage/log/log_segments.h"
#include "tests/assert_ok.h"
#include "tests/test_util.h"

namespace momenta {
namespace {

size_t SegmentCount(const std::string& array) {
  auto s = ListLogSegments(LogDirPath(array));
  return s.ok() ? s->size() : 0;
}

void Fill(const std::string& path, int64_t retain_ms) {
  BufferedArrayOptions o;
  o.io.writable = true;
  o.log_segment_bytes = 8 << 10;  // a few hundred records a segment
  o.retain_ms = retain_ms;
  o.sync = LogSync::kNone;  // what is measured here is retention, not fsync latency
  auto ba = BufferedArray::Open(path, o);
  ASSERT_OK(ba);
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<IndexedValue> ups;
    for (int k = 0; k < 100; ++k)
      ups.push_back({static_cast<uint64_t>(batch * 100 + k), Value::Float(batch + 1.0), /*time=*/1000 + batch});
    ASSERT_OK((*ba)->Apply(ups));
    ASSERT_OK((*ba)->Commit());
  }
  ASSERT_OK((*ba)->Close());
}

TEST(LogRetentionTest, OldSegmentsGoOnlyWithARetention) {
  testing::ScratchDir dir;
  for (int64_t retain : {int64_t{-1}, int64_t{24} * 3600 * 1000}) {
    const std::string path = dir.File(retain < 0 ? "keep.npy" : "retain.npy");
    {
      IoOptions io;
      io.writable = true;
      const uint64_t shape[] = {4096};
      ASSERT_OK(ArrayFile::Create(path, DType::kF8, shape, io));
    }
    Fill(path, retain);
    if (retain < 0) {
      EXPECT_GT(SegmentCount(path), 5u);
    } else {
      EXPECT_EQ(SegmentCount(path), 1u);  // all records are from 1970: only the newest segment stays
    }
    BufferedArrayOptions o;
    auto ba = BufferedArray::Open(path, o);
    ASSERT_OK(ba);
    auto s = (*ba)->Summarize(0, 2000, false);
    ASSERT_OK(s);
    EXPECT_EQ(static_cast<double>(Sum(s->index)), 100.0 * (20 * 21 / 2));
  }
}

}  // namespace
}  // namespace momenta
