#include "buffers/tree/tree_build.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "storage/io/extents.h"
#include "storage/util/cancel.h"

namespace momenta {
namespace {

// Array bytes summarized per step. Each step's reads must all land before
// the next step's are submitted, so the step is large enough that the short
// drain at its end costs little next to streaming it (16 MiB steps reached
// ~1 GB/s where 256 MiB reached 1.6 GB/s on a 1.4 GB/s virtio disk).
constexpr uint64_t kChunkBytes = 64 << 20;
constexpr uint64_t kRequestBytes = 1 << 20;  // one read request (many in flight)

struct LeafRun {
  uint64_t first = 0;  // leaf index
  uint64_t count = 0;
};

// Runs of leaves that overlap data extents, merged and in order.
std::vector<LeafRun> LeavesWithData(const std::vector<ByteRange>& extents, const ArrayFile& array,
                                    const TreeLayout& layout) {
  std::vector<LeafRun> runs;
  const uint64_t off = array.ByteOffset(0), item = array.itemsize();
  const uint64_t leaf = layout.leaf_span();
  for (const ByteRange& e : extents) {
    const uint64_t first_elem = (e.begin - off) / item;
    const uint64_t end_elem = std::min(array.length(), (e.end - off + item - 1) / item);
    if (first_elem >= end_elem) continue;
    const uint64_t a = first_elem / leaf, b = (end_elem - 1) / leaf + 1;
    if (!runs.empty() && runs.back().first + runs.back().count >= a) {
      runs.back().count = std::max(runs.back().first + runs.back().count, b) - runs.back().first;
    } else {
      runs.push_back({a, b - a});
    }
  }
  return runs;
}

struct AlignedBuffer {
  explicit AlignedBuffer(size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, std::max<size_t>(n, 4096)) != 0) p = nullptr;
    data.reset(static_cast<char*>(p));
  }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
};

// Summarizes leaves [first, first + count) whose bytes start at `bytes`.
void SummarizeLeaves(MomentTree& tree, DType dtype, const char* bytes, uint64_t first, uint64_t count) {
  const TreeLayout& layout = tree.layout();
  const size_t item = DTypeSize(dtype);
  std::vector<double> scratch(layout.leaf_span());
  const char* at = bytes;
  for (uint64_t j = first; j < first + count; ++j) {
    const uint64_t n = layout.node_end(1, j) - layout.node_first(1, j);
    RangeSummary s = RangeSummary::OfElements(tree.order(), dtype, at, n, scratch.data());
    tree.codec().Encode(s, tree.Slot(1, j), tree.Node(1, j));
    at += n * item;
  }
}

}  // namespace

Status RecomputeFromChildren(MomentTree& tree, int level, uint64_t j) {
  const TreeLayout& layout = tree.layout();
  const NodeCodec& codec = tree.codec();
  const uint64_t first = j * layout.fanout();
  const uint64_t end = std::min(first + layout.fanout(), layout.nodes(level - 1));
  uint64_t mask = 0;  // children written so far
  for (uint64_t c = first; c < end; ++c)
    if (codec.Check(tree.Node(level - 1, c)) != 0) mask |= uint64_t{1} << (c - first);
  if (mask == 0 && codec.Classify(tree.Slot(level, j), tree.Node(level, j)) == NodeCodec::NodeState::kHole)
    return Status::OK();  // zeros under a hole: it stays one (no store, no page)
  MOMENTA_RETURN_IF_ERROR(tree.AllocateNodes(level, j, 1));
  RangeSummary acc(tree.order());
  for (uint64_t c = first; c < end; ++c) acc = Merge(acc, tree.Summary(level - 1, c));
  codec.Encode(acc, tree.Slot(level, j), tree.Node(level, j), mask);
  if (level == layout.levels()) return tree.MarkWritten(level, j);
  return Status::OK();
}

Result<BuildStats> BuildTree(ArrayFile& array, MomentTree& tree, const BuildProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  BuildStats stats;
  const TreeLayout& layout = tree.layout();
  if (layout.levels() == 0) return stats;
  const uint64_t data_begin = array.ByteOffset(0);
  const uint64_t data_end = array.ByteOffset(array.length());
  auto extents = DataExtents(array.path(), data_begin, data_end);
  if (!extents.ok()) return extents.status();
  const std::vector<LeafRun> runs = LeavesWithData(*extents, array, layout);

  // Chunks: pieces of the runs of at most kChunkBytes of array data.
  const uint64_t item = array.itemsize();
  const uint64_t leaves_per_chunk = std::max<uint64_t>(1, kChunkBytes / (layout.leaf_span() * item));
  std::vector<LeafRun> chunks;
  uint64_t total = 0;
  uint64_t largest = 0;  // bytes of the largest chunk: the buffers need no more
  for (const LeafRun& r : runs) {
    for (uint64_t a = r.first; a < r.first + r.count; a += leaves_per_chunk) {
      chunks.push_back({a, std::min(leaves_per_chunk, r.first + r.count - a)});
      const uint64_t bytes =
          (layout.node_end(1, chunks.back().first + chunks.back().count - 1) - layout.node_first(1, a)) * item;
      total += bytes;
      largest = std::max(largest, bytes);
    }
  }

  // Sized to the data (a small array's rebuild does not map 2 x 64 MiB).
  const size_t buffer_bytes = static_cast<size_t>(largest);
  AlignedBuffer buffers[2] = {AlignedBuffer(buffer_bytes), AlignedBuffer(buffer_bytes)};
  if (!buffers[0].data || !buffers[1].data) return Status::IOError(array.path(), "out of memory for build buffers");
  std::future<void> pending;  // summarizing the previous chunk
  uint64_t done = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(array.path()));  // a signal: stop between chunks
    const LeafRun& chunk = chunks[c];
    const uint64_t first_elem = layout.node_first(1, chunk.first);
    const uint64_t end_elem = layout.node_end(1, chunk.first + chunk.count - 1);
    const uint64_t bytes = (end_elem - first_elem) * item;
    char* buf = buffers[c % 2].data.get();
    std::vector<ReadRequest> requests;
    for (uint64_t at = 0; at < bytes; at += kRequestBytes)
      requests.push_back({array.ByteOffset(first_elem) + at, std::min(kRequestBytes, bytes - at), buf + at});
    Status read = array.io().ReadBatch(requests);
    if (pending.valid()) pending.get();
    MOMENTA_RETURN_IF_ERROR(read);
    MOMENTA_RETURN_IF_ERROR(tree.AllocateNodes(1, chunk.first, chunk.count));
    // Both cores: the chunk's leaves split in two halves.
    pending = std::async(std::launch::async, [&tree, &array, buf, chunk, item, &layout] {
      const uint64_t half = chunk.count / 2;
      std::thread other([&] { SummarizeLeaves(tree, array.dtype(), buf, chunk.first, half); });
      const char* second = buf + (layout.node_first(1, chunk.first + half) - layout.node_first(1, chunk.first)) * item;
      SummarizeLeaves(tree, array.dtype(), second, chunk.first + half, chunk.count - half);
      other.join();
    });
    stats.data_bytes_read += bytes;
    stats.leaves_with_data += chunk.count;
    done += bytes;
    if (progress) progress(done, total);
  }
  if (pending.valid()) pending.get();
  if (layout.levels() == 1)  // the leaves are the top: the header records which were written
    for (const LeafRun& r : runs)
      for (uint64_t j = r.first; j < r.first + r.count; ++j) MOMENTA_RETURN_IF_ERROR(tree.MarkWritten(1, j));

  // Only parents of leaves with data can differ from the zero node they
  // start as: walk up the runs of changed nodes, level by level.
  std::vector<LeafRun> changed = runs;
  for (int level = 2; level <= layout.levels(); ++level) {
    std::vector<LeafRun> parents;
    for (const LeafRun& r : changed) {
      const uint64_t a = r.first / layout.fanout(), b = (r.first + r.count - 1) / layout.fanout() + 1;
      if (!parents.empty() && parents.back().first + parents.back().count >= a) {
        parents.back().count = std::max(parents.back().first + parents.back().count, b) - parents.back().first;
      } else {
        parents.push_back({a, b - a});
      }
    }
    for (const LeafRun& r : parents)
      for (uint64_t j = r.first; j < r.first + r.count; ++j)
        MOMENTA_RETURN_IF_ERROR(RecomputeFromChildren(tree, level, j));
    changed = std::move(parents);
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace momenta
