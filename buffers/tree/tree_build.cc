#include "buffers/tree/tree_build.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "storage/io/extents.h"
#include "storage/io/read_flow.h"
#include "storage/util/cancel.h"

namespace momenta {
namespace {

// The build streams the array's data through kBuffers buffers of one chunk
// each: chunk k is summed while the reads of chunks k + 1 .. k + kBuffers - 1
// land in the others, and the read window never drains between chunks
// (IoBackend::ReadStream). 1 MiB requests (32 MiB in flight at the backend's
// default depth of 32): this disk's sequential rate needs about 4 MiB in
// flight, and larger requests read no faster (bench/README.md).
constexpr uint64_t kChunkBytes = 32 << 20;
constexpr size_t kBuffers = 4;
constexpr uint64_t kRequestBytes = 1 << 20;

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

// Bytes of array data under leaves [chunk.first, chunk.first + chunk.count).
uint64_t ChunkBytes(const TreeLayout& layout, LeafRun chunk, uint64_t item) {
  return (layout.node_end(1, chunk.first + chunk.count - 1) - layout.node_first(1, chunk.first)) * item;
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

// Summarizes the chunk whose bytes are at `buf` on both cores: its leaves
// split in two halves.
void SummarizeChunk(MomentTree& tree, DType dtype, const char* buf, LeafRun chunk) {
  const TreeLayout& layout = tree.layout();
  const uint64_t half = chunk.count / 2;
  std::thread other([&] { SummarizeLeaves(tree, dtype, buf, chunk.first, half); });
  const char* second =
      buf + (layout.node_first(1, chunk.first + half) - layout.node_first(1, chunk.first)) * DTypeSize(dtype);
  SummarizeLeaves(tree, dtype, second, chunk.first + half, chunk.count - half);
  other.join();
}

// The stream's requests: each chunk's bytes in kRequestBytes pieces, into the
// buffer chunk c % buffers.size(). ends[c]: one past chunk c's last request.
std::vector<ReadRequest> ChunkRequests(const ArrayFile& array, const TreeLayout& layout,
                                       const std::vector<LeafRun>& chunks, std::vector<AlignedBuffer>& buffers,
                                       std::vector<size_t>& ends) {
  std::vector<ReadRequest> requests;
  for (size_t c = 0; c < chunks.size(); ++c) {
    const uint64_t first_elem = layout.node_first(1, chunks[c].first);
    const uint64_t bytes = ChunkBytes(layout, chunks[c], array.itemsize());
    char* buf = buffers[c % buffers.size()].data.get();
    for (uint64_t at = 0; at < bytes; at += kRequestBytes)
      requests.push_back({array.ByteOffset(first_elem) + at, std::min(kRequestBytes, bytes - at), buf + at});
    ends.push_back(requests.size());
  }
  return requests;
}

// The consumer of the stream: sums each chunk once its reads landed, then
// lets the reader fill its buffer with the chunk buffers.size() on.
Status ConsumeChunks(ArrayFile& array, MomentTree& tree, const std::vector<LeafRun>& chunks,
                     const std::vector<AlignedBuffer>& buffers, const std::vector<size_t>& ends, ReadFlow& flow,
                     uint64_t total, const BuildProgress& progress) {
  uint64_t done = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    MOMENTA_RETURN_IF_ERROR(CheckCancel(array.path()));  // a signal: stop between chunks
    if (!flow.WaitLanded(ends[c])) return Status::IOError(array.path(), "the build's reads stopped early");
    const LeafRun& chunk = chunks[c];
    MOMENTA_RETURN_IF_ERROR(tree.AllocateNodes(1, chunk.first, chunk.count));
    SummarizeChunk(tree, array.dtype(), buffers[c % buffers.size()].data.get(), chunk);
    flow.Allow(ends[std::min(c + buffers.size(), chunks.size()) - 1]);
    done += ChunkBytes(tree.layout(), chunk, array.itemsize());
    if (progress) progress(done, total);
  }
  return Status::OK();
}

// Reads every chunk on a thread of its own (one stream of requests over the
// whole array) while this thread and one more sum the chunks that landed.
Status SummarizeChunks(ArrayFile& array, MomentTree& tree, const std::vector<LeafRun>& chunks, uint64_t largest,
                       uint64_t total, const BuildProgress& progress) {
  if (chunks.empty()) return Status::OK();
  // Sized to the data (a small array's rebuild does not map kBuffers x 32 MiB).
  std::vector<AlignedBuffer> buffers;
  for (size_t k = 0; k < std::min(kBuffers, chunks.size()); ++k) {
    buffers.emplace_back(static_cast<size_t>(largest));
    if (!buffers.back().data) return Status::IOError(array.path(), "out of memory for build buffers");
  }
  std::vector<size_t> ends;
  const std::vector<ReadRequest> requests = ChunkRequests(array, tree.layout(), chunks, buffers, ends);
  ReadFlow flow;
  flow.Allow(ends[buffers.size() - 1]);
  Status read;
  std::thread reader([&] { read = array.io().ReadStream(requests, flow); });
  Status summed = ConsumeChunks(array, tree, chunks, buffers, ends, flow, total, progress);
  if (!summed.ok()) flow.Stop();
  reader.join();
  MOMENTA_RETURN_IF_ERROR(read);
  return summed;
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
      const uint64_t bytes = ChunkBytes(layout, chunks.back(), item);
      total += bytes;
      largest = std::max(largest, bytes);
    }
  }

  MOMENTA_RETURN_IF_ERROR(SummarizeChunks(array, tree, chunks, largest, total, progress));
  stats.data_bytes_read = total;
  for (const LeafRun& chunk : chunks) stats.leaves_with_data += chunk.count;
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
