#include "buffers/range_query.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

namespace momenta {
namespace {

constexpr uint64_t kAlign = 4096;

// A raw read of elements [begin, end) and, when `complement`, how it combines
// with the leaf `leaf` to give the piece the plan wants.
struct RawPiece {
  uint64_t begin = 0, end = 0;
  bool complement = false;  // [begin, end) is the leaf minus the wanted piece
  uint64_t leaf = 0;
  // Filled by the I/O plan:
  uint64_t byte_begin = 0;  // aligned file range actually read
  size_t buffer_at = 0;     // where in the array buffer that range lands
};

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

std::unique_ptr<char, FreeDeleter> AlignedAlloc(size_t n) {
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, std::max<size_t>(n, kAlign)) != 0) return nullptr;
  return std::unique_ptr<char, FreeDeleter>(static_cast<char*>(p));
}

}  // namespace

Result<RangeSummary> SummarizeRange(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q,
                                    bool need_extremes, QueryCost* cost) {
  assert(p <= q && q <= array.length());
  QueryCost local;
  QueryCost& c = cost ? *cost : local;
  c = QueryCost{};
  const TreeLayout& layout = tree.layout();
  const int order = tree.order();
  if (p == q) return RangeSummary(order);
  const TreeLayout::Plan plan = layout.Decompose(p, q);

  // 1. The raw pieces, on their shorter side where that is allowed.
  std::vector<RawPiece> raw;
  const bool whole_nodes = !plan.runs.empty();
  if (plan.raw_left_end > plan.raw_left_begin) {
    RawPiece piece{plan.raw_left_begin, plan.raw_left_end};
    if (whole_nodes && !need_extremes) {
      const uint64_t leaf = plan.raw_left_begin / layout.leaf_span();
      const uint64_t first = layout.node_first(1, leaf);
      if (piece.begin - first < piece.end - piece.begin) piece = RawPiece{first, piece.begin, true, leaf};
    }
    raw.push_back(piece);
  }
  if (plan.raw_right_end > plan.raw_right_begin) {
    RawPiece piece{plan.raw_right_begin, plan.raw_right_end};
    if (!need_extremes) {
      const uint64_t leaf = plan.raw_right_begin / layout.leaf_span();
      const uint64_t end = layout.node_end(1, leaf);
      if (end - piece.end < piece.end - piece.begin) piece = RawPiece{piece.end, end, true, leaf};
    }
    raw.push_back(piece);
  }

  // 2. Array reads, widened to aligned pages so io_uring can use O_DIRECT.
  const uint64_t data_end = array.ByteOffset(array.length());
  std::vector<ReadRequest> array_reads;
  size_t array_buffer_bytes = 0;
  for (RawPiece& r : raw) {
    if (r.begin == r.end) continue;
    const uint64_t b = array.ByteOffset(r.begin) / kAlign * kAlign;
    const uint64_t e = std::min((array.ByteOffset(r.end) + kAlign - 1) / kAlign * kAlign, data_end);
    r.byte_begin = b;
    r.buffer_at = array_buffer_bytes;
    array_reads.push_back({b, static_cast<size_t>(e - b), nullptr});
    array_buffer_bytes += (e - b + kAlign - 1) / kAlign * kAlign;
  }
  auto array_buffer = AlignedAlloc(array_buffer_bytes);
  if (!array_buffer) return Status::IOError(array.path(), "out of memory for a query");
  for (size_t k = 0, at = 0; k < array_reads.size(); ++k) {
    array_reads[k].dest = array_buffer.get() + at;
    at += (array_reads[k].length + kAlign - 1) / kAlign * kAlign;
  }

  // 3. Disk-tier reads: every run below the RAM tier, and the leaves the
  // shorter-side pieces subtract from.
  const size_t node_bytes = tree.codec().bytes();
  struct NodeSource {
    int level;
    uint64_t first, count;
    size_t buffer_at;  // in node doubles; SIZE_MAX: read from the mapping
  };
  std::vector<NodeSource> sources;
  size_t tier_doubles = 0;
  auto add_source = [&](int level, uint64_t first, uint64_t count) {
    const bool from_ram = layout.in_ram(level);
    sources.push_back({level, first, count, from_ram ? SIZE_MAX : tier_doubles});
    if (!from_ram) tier_doubles += count * tree.codec().doubles();
  };
  for (const auto& run : plan.runs) add_source(run.level, run.first, run.count);
  for (const RawPiece& r : raw)
    if (r.complement) add_source(1, r.leaf, 1);
  std::vector<double> tier_buffer(tier_doubles);
  std::vector<ReadRequest> tier_reads;
  for (const NodeSource& s : sources) {
    if (s.buffer_at == SIZE_MAX) {
      c.ram_nodes += s.count;
      continue;
    }
    tier_reads.push_back({tree.NodeOffset(s.level, s.first), s.count * node_bytes,
                          reinterpret_cast<char*>(tier_buffer.data() + s.buffer_at)});
    c.tier_bytes += s.count * node_bytes;
  }
  for (const ReadRequest& r : array_reads) c.array_bytes += r.length;
  c.requests = array_reads.size() + tier_reads.size();

  // 4. One batch for everything.
  MOMENTA_RETURN_IF_ERROR(array.io().ReadBatchWith(array_reads, tree.io(), tier_reads));

  // 5. Every node the answer takes passes its check first (a run of
  // siblings shares one parent: the memo checks it once).
  auto node_bytes_of = [&](const NodeSource& s, uint64_t k) {
    return s.buffer_at == SIZE_MAX ? tree.Node(s.level, s.first + k)
                                   : tier_buffer.data() + s.buffer_at + k * tree.codec().doubles();
  };
  for (const NodeSource& s : sources) {
    MomentTree::ParentMemo memo;
    for (uint64_t k = 0; k < s.count; ++k)
      MOMENTA_RETURN_IF_ERROR(tree.VerifyNode(s.level, s.first + k, node_bytes_of(s, k), &memo));
  }

  // 6. Combine left to right.
  auto node_summary = [&](const NodeSource& s, uint64_t k) {
    const uint64_t j = s.first + k;
    const uint64_t count = layout.node_end(s.level, j) - layout.node_first(s.level, j);
    return tree.codec().Decode(node_bytes_of(s, k), count);
  };
  // Raw pieces are summarised a slice at a time, so the scratch stays small
  // even for the paper's huge in-RAM bins (--disk-tier off; buffers/REFERENCE.md §3.6).
  constexpr uint64_t kSlice = 1 << 16;
  std::vector<double> scratch(std::min<uint64_t>(kSlice, 2 * layout.leaf_span()));
  auto raw_summary = [&](const RawPiece& r) {
    const char* bytes = array_buffer.get() + r.buffer_at + (array.ByteOffset(r.begin) - r.byte_begin);
    const uint64_t n = r.end - r.begin;
    if (n <= scratch.size()) return RangeSummary::OfElements(order, array.dtype(), bytes, n, scratch.data());
    RangeSummary acc(order);
    for (uint64_t at = 0; at < n; at += scratch.size()) {
      const uint64_t m = std::min<uint64_t>(scratch.size(), n - at);
      acc = Merge(acc, RangeSummary::OfElements(order, array.dtype(), bytes + at * array.itemsize(), m,
                                                scratch.data()));
    }
    return acc;
  };
  // `complement_source` indexes the node source of the next complement leaf
  // (those sources follow the plan's runs, in the order of `raw`).
  size_t complement_source = plan.runs.size();
  // The wanted piece read and summarised directly: the fallback when taking
  // the complement from the leaf would lose the variance (below).
  Status direct_status;
  auto direct_summary = [&](uint64_t begin, uint64_t end) {
    std::vector<char> bytes((end - begin) * array.itemsize());
    direct_status = array.ReadRaw(begin, end - begin, bytes.data());
    c.array_bytes += bytes.size();
    c.requests += 1;
    RangeSummary acc(order);
    for (uint64_t at = 0; direct_status.ok() && at < end - begin; at += scratch.size()) {
      const uint64_t m = std::min<uint64_t>(scratch.size(), end - begin - at);
      acc = Merge(acc, RangeSummary::OfElements(order, array.dtype(), bytes.data() + at * array.itemsize(), m,
                                                scratch.data()));
    }
    return acc;
  };
  auto piece_summary = [&](const RawPiece& r, bool left_side) {
    if (!r.complement) return raw_summary(r);
    const RangeSummary leaf = node_summary(sources[complement_source++], 0);
    const RangeSummary complement = raw_summary(r);
    RangeSummary part = left_side ? UnmergeRight(leaf, complement) : UnmergeLeft(leaf, complement);
    // Subtracting sums of squares cancels: part = leaf − complement keeps
    // Σ(a − mean)² only to ~2^-50 of the sums subtracted (plus the leaf's
    // update drift, kDriftLimit of its own). When that is not within 1e-10
    // of the part's own Σ(a − mean)² — the part's values much closer
    // together than the leaf's, e.g. a run of zeros beside large values —
    // the part is read and summarised itself: one more read, only then.
    if (part.values.count() > 0 && leaf.values.count() > 0) {
      const long double leaf_s2 = std::fabs(leaf.values.sum_of_squared_deviations());
      const long double complement_s2 =
          complement.values.count() > 0
              ? std::fabs(complement.values.RecenteredAt(leaf.values.shift()).sum_of_squared_deviations())
              : 0.0L;
      const long double error = kDriftLimit * leaf.values.central_sum_of_squares() +
                                0x1p-50L * (leaf_s2 + complement_s2);
      if (error > 1e-10L * part.values.central_sum_of_squares()) {
        const uint64_t leaf_first = layout.node_first(1, r.leaf), leaf_end = layout.node_end(1, r.leaf);
        part = left_side ? direct_summary(r.end, leaf_end) : direct_summary(leaf_first, r.begin);
      }
    }
    return part;
  };

  RangeSummary acc(order);
  size_t next_raw = 0;
  const bool has_left = plan.raw_left_end > plan.raw_left_begin;
  if (has_left) acc = piece_summary(raw[next_raw++], /*left_side=*/true);
  for (size_t s = 0; s < plan.runs.size(); ++s)
    for (uint64_t k = 0; k < sources[s].count; ++k) acc = Merge(acc, node_summary(sources[s], k));
  if (next_raw < raw.size()) acc = Merge(acc, piece_summary(raw[next_raw++], /*left_side=*/false));
  MOMENTA_RETURN_IF_ERROR(direct_status);
  return acc;
}

}  // namespace momenta
