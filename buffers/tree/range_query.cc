#include "buffers/tree/range_query.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "storage/io/fault_guard.h"
#include "storage/io/mapped_file.h"
#include "storage/io/posix_file.h"
#include "storage/io/read_coalescing.h"

namespace momenta {
namespace internal {
extern std::function<void()> g_after_residency_check;
}  // namespace internal
namespace {

constexpr uint64_t kAlign = 4096;

// A raw read of elements [begin, end) and, when `complement`, how it combines
// with the leaf `leaf` to give the piece the plan wants.
struct RawPiece {
  uint64_t begin = 0, end = 0;
  bool complement = false;  // [begin, end) is the leaf minus the wanted piece
  uint64_t leaf = 0;
  bool zeros = false;  // known zeros from the RAM tier (KnownZeros): nothing read
  // Filled by the I/O plan:
  uint64_t byte_begin = 0;      // aligned file range actually read
  size_t read = SIZE_MAX;       // its request among the query's array reads
  const char* bytes = nullptr;  // once read (or mapped): file byte byte_begin
  bool mapped = false;          // bytes point into the array's mapping (its pages were cached)
};

// A node an answer relies on without taking it: its children mask (or, a
// leaf, its being a hole) says some cells are zeros (KnownZeros).
struct NodeRef {
  int level;
  uint64_t index;
};

// Whether cells [begin, end) are zeros as the RAM tier alone tells (no
// read): every node of the level just below the RAM tier that they touch is
// recorded as never written in its RAM-tier parent's children mask — a
// never-written node and every node under it are holes, the summary of zeros
// (range_summary.h), as a whole node's answer already takes them — or, when
// the leaves themselves are in RAM, every leaf they touch is a hole. The
// nodes relied on are appended to *witnesses, to be checked before the answer
// uses them. On a sparse array this is what spares an overview's bins the
// reads (and sums) of end leaves and leaf runs that lie in holes.
bool KnownZeros(const MomentTree& tree, uint64_t begin, uint64_t end, std::vector<NodeRef>* witnesses) {
  const TreeLayout& layout = tree.layout();
  const int ram = layout.ram_from();
  if (begin >= end || layout.levels() == 0 || ram > layout.levels()) return false;
  const int below = std::max(ram - 1, 1);  // the level whose nodes must be holes
  const uint64_t first = begin / layout.span(below), last = (end - 1) / layout.span(below);
  if (last - first >= kMaxFanout) return false;  // a long run: not worth the look
  const size_t before = witnesses->size();
  for (uint64_t j = first; j <= last; ++j) {
    NodeRef witness{below, j};
    bool hole;
    if (below >= ram) {
      hole = tree.codec().Check(tree.Node(below, j)) == 0;
    } else {
      witness = {ram, j / layout.fanout()};
      hole = ((tree.codec().ChildrenMask(tree.Node(ram, witness.index)) >> (j % layout.fanout())) & 1) == 0;
    }
    if (!hole) {
      witnesses->resize(before);
      return false;
    }
    if (witnesses->size() == before || witnesses->back().level != witness.level ||
        witnesses->back().index != witness.index)
      witnesses->push_back(witness);
  }
  return true;
}

// The summary of n zeros (what OfElements gives them; extremes 0 when asked).
RangeSummary Zeros(int order, uint64_t n, bool extremes) {
  RangeSummary s(order);
  s.index = IndexMoments::FromTerms(order, n, MomentTerms{});
  s.values = ValueMoments::FromParts(n, 0, 0, 0);
  if (extremes) s.extremes = Extremes{0, 0};
  return s;
}

// The raw pieces of a plan, on their shorter side where that is allowed: a
// partial leaf beside whole nodes may be taken as leaf − complement when the
// complement is shorter (not when extremes are needed: min/max do not invert).
// A piece the RAM tier knows to be zeros is read nowhere (KnownZeros).
std::vector<RawPiece> PlanRawPieces(const MomentTree& tree, const TreeLayout::Plan& plan, bool need_extremes,
                                    std::vector<NodeRef>* witnesses) {
  const TreeLayout& layout = tree.layout();
  std::vector<RawPiece> raw;
  const bool whole_nodes = !plan.runs.empty();
  auto zeros = [&](RawPiece& piece) {
    piece.zeros = KnownZeros(tree, piece.begin, piece.end, witnesses);
    return piece.zeros;
  };
  if (plan.raw_left_end > plan.raw_left_begin) {
    RawPiece piece{plan.raw_left_begin, plan.raw_left_end};
    if (zeros(piece)) {
    } else if (whole_nodes && !need_extremes) {
      const uint64_t leaf = plan.raw_left_begin / layout.leaf_span();
      const uint64_t first = layout.node_first(1, leaf);
      if (piece.begin - first < piece.end - piece.begin) piece = RawPiece{first, piece.begin, true, leaf};
    }
    raw.push_back(piece);
  }
  if (plan.raw_right_end > plan.raw_right_begin) {
    RawPiece piece{plan.raw_right_begin, plan.raw_right_end};
    if (zeros(piece)) {
    } else if (!need_extremes) {
      const uint64_t leaf = plan.raw_right_begin / layout.leaf_span();
      const uint64_t end = layout.node_end(1, leaf);
      if (end - piece.end < piece.end - piece.begin) piece = RawPiece{piece.end, end, true, leaf};
    }
    raw.push_back(piece);
  }
  return raw;
}

// The array reads of the raw pieces, widened to aligned pages so io_uring can
// use O_DIRECT (each piece's byte_begin and read are filled in).
std::vector<ReadRequest> PlanArrayReads(ArrayFile& array, std::vector<RawPiece>& raw) {
  const uint64_t data_end = array.ByteOffset(array.length());
  std::vector<ReadRequest> reads;
  for (RawPiece& r : raw) {
    if (r.begin == r.end || r.zeros) continue;
    const uint64_t b = array.ByteOffset(r.begin) / kAlign * kAlign;
    const uint64_t e = std::min((array.ByteOffset(r.end) + kAlign - 1) / kAlign * kAlign, data_end);
    r.byte_begin = b;
    r.read = reads.size();
    reads.push_back({b, static_cast<size_t>(e - b), nullptr});
  }
  return reads;
}

// The nodes an answer takes: the plan's runs, then the leaves the
// shorter-side pieces subtract from (in the order of the raw pieces). RAM-tier
// nodes are used from the mapping; the others are read (disk-tier reads).
struct NodeSource {
  int level;
  uint64_t first, count;
  size_t read;                   // its request among the query's node reads; SIZE_MAX: from the mapping
  const double* data = nullptr;  // once read: the first node's doubles
  bool zeros = false;            // holes the RAM tier vouches for (KnownZeros): read and checked, not summed
};
struct NodeReads {
  std::vector<NodeSource> sources;
  std::vector<ReadRequest> reads;
  std::vector<NodeRef> witnesses;  // the RAM-tier nodes that vouch for zeros (pieces' and runs')
};

NodeReads PlanNodeReads(const MomentTree& tree, const TreeLayout::Plan& plan, const std::vector<RawPiece>& raw,
                        QueryCost& c) {
  const TreeLayout& layout = tree.layout();
  const size_t node_bytes = tree.codec().bytes();
  NodeReads out;
  auto add_source = [&](int level, uint64_t first, uint64_t count, bool may_be_zeros) {
    // Holes the RAM tier vouches for are not summed, but their nodes are
    // still checked, so a damaged hole is never taken for zeros: through
    // the mapping when their pages are cached, else read with the query's
    // other reads (the same one device round; a sparse tree's holes cost no
    // I/O). Checking uncached ones through the mapping would fault their
    // pages in one by one: a device round each.
    const bool zeros =
        may_be_zeros && !layout.in_ram(level) &&
        KnownZeros(tree, layout.node_first(level, first), layout.node_end(level, first + count - 1), &out.witnesses);
    if (zeros && tree.NodesCached(level, first, count)) {
      out.sources.push_back({level, first, count, SIZE_MAX, nullptr, true});
      return;
    }
    if (zeros) {
      out.sources.push_back({level, first, count, out.reads.size(), nullptr, true});
      out.reads.push_back({tree.NodeOffset(level, first), count * node_bytes, nullptr});
      c.tier_bytes += count * node_bytes;
      return;
    }
    if (layout.in_ram(level)) {
      out.sources.push_back({level, first, count, SIZE_MAX});
      c.ram_nodes += count;
      return;
    }
    out.sources.push_back({level, first, count, out.reads.size()});
    out.reads.push_back({tree.NodeOffset(level, first), count * node_bytes, nullptr});
    c.tier_bytes += count * node_bytes;
  };
  for (const auto& run : plan.runs) add_source(run.level, run.first, run.count, true);
  for (const RawPiece& r : raw)
    if (r.complement) add_source(1, r.leaf, 1, false);  // its bytes are subtracted from: always read
  return out;
}

// Room for converted elements, grown without zeroing (a query's pieces and
// a batch's ranges share it; zeroing 128 KiB per query showed in profiles).
struct ScratchDoubles {
  std::unique_ptr<double[]> data;
  size_t size = 0;
  void Reserve(size_t n) {
    if (size >= n) return;
    data.reset(new double[n]);
    size = n;
  }
};

// Step 6 of SummarizeRange: the pieces read, summarized and merged left to
// right.
class Combiner {
 public:
  Combiner(MomentTree& tree, ArrayFile& array, IoBackend& array_io, const MappedFile* map, const NodeReads& nodes,
           size_t first_complement, bool need_extremes, QueryCost& c, ScratchDoubles& scratch)
      : tree_(tree),
        array_(array),
        array_io_(array_io),
        map_(map),
        layout_(tree.layout()),
        order_(tree.order()),
        nodes_(nodes),
        complement_source_(first_complement),
        need_extremes_(need_extremes),
        c_(c),
        scratch_(scratch) {}

  // The k-th node of source s (its bytes from the mapping or the tier buffer).
  const double* NodeBytes(const NodeSource& s, uint64_t k) const {
    return s.read == SIZE_MAX ? tree_.Node(s.level, s.first + k) : s.data + k * tree_.codec().doubles();
  }
  RangeSummary NodeSummary(const NodeSource& s, uint64_t k) const {
    const uint64_t j = s.first + k;
    const uint64_t count = layout_.node_end(s.level, j) - layout_.node_first(s.level, j);
    return tree_.codec().Decode(NodeBytes(s, k), count);
  }
  // The whole run of siblings s in one pass (NodeCodec::DecodeRun): its
  // nodes sit one after another, in the mapping or in the tier buffer.
  RangeSummary RunSummary(const NodeSource& s) const {
    const uint64_t last = s.first + s.count - 1;
    if (s.zeros)  // holes: what DecodeRun gives them (a hole's stored extremes are 0)
      return Zeros(order_, layout_.node_end(s.level, last) - layout_.node_first(s.level, s.first), true);
    return tree_.codec().DecodeRun(NodeBytes(s, 0), s.count, layout_.span(s.level),
                                   layout_.node_end(s.level, last) - layout_.node_first(s.level, last));
  }
  // A raw piece: the wanted elements, or for a complement piece the leaf's
  // summary minus the complement's (read directly when that loses the variance).
  RangeSummary PieceSummary(const RawPiece& r, bool left_side);
  // OK unless a fallback read failed or a mapped piece faulted (the first
  // such error).
  const Status& status() const { return status_; }

 private:
  // Raw pieces are summarized a slice at a time, so the scratch stays small
  // even for the paper's huge in-RAM bins (--disk-tier off; buffers/REFERENCE.md §3.6).
  static constexpr uint64_t kSlice = 1 << 16;

  // n elements at `bytes`, a slice at a time.
  RangeSummary OfSlices(const char* bytes, uint64_t n) {
    RangeSummary acc(order_);
    Scratch(n);
    for (uint64_t at = 0; at < n; at += scratch_.size) {
      const uint64_t m = std::min<uint64_t>(scratch_.size, n - at);
      acc = Merge(acc, RangeSummary::OfElements(order_, array_.dtype(), bytes + at * array_.itemsize(), m,
                                                scratch_.data.get(), need_extremes_));
    }
    return acc;
  }
  RangeSummary BytesSummary(const char* bytes, uint64_t n) {
    Scratch(n);
    if (n <= scratch_.size)
      return RangeSummary::OfElements(order_, array_.dtype(), bytes, n, scratch_.data.get(), need_extremes_);
    return OfSlices(bytes, n);
  }
  // A piece's cells, from where they were read or, when mapped, from the
  // mapping under the fault guard: the file truncated under it is the
  // IOError a read past its end gives (the sums then count for nothing).
  RangeSummary RawSummary(const RawPiece& r) {
    const char* bytes = r.bytes + (array_.ByteOffset(r.begin) - r.byte_begin);
    const uint64_t n = r.end - r.begin;
    if (!r.mapped) return BytesSummary(bytes, n);
    RangeSummary s(order_);
    Scratch(n);  // allocated outside the guard: a fault inside leaks nothing
    if (GuardedCallOf(map_->data(), map_->size(), [&] {
          Prefetch(bytes, n * array_.itemsize());
          s = BytesSummary(bytes, n);
        }))
      return s;
    Fail(ReadPastEnd(array_.path(), array_.ByteOffset(r.begin), n * array_.itemsize()));
    return RangeSummary(order_);
  }
  // Asks for every cache line of mapped bytes before they are summed: the
  // hardware prefetcher stops at each 4 KiB page, so the sums would
  // otherwise wait on memory at every page (a copy by read brought them in
  // before). A prefetch never faults.
  static void Prefetch(const char* bytes, uint64_t length) {
    for (uint64_t at = 0; at < length; at += 64) __builtin_prefetch(bytes + at, 0, 1);
  }
  void Fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  // The wanted piece read and summarized directly: the fallback when taking
  // the complement from the leaf would lose the variance.
  RangeSummary DirectSummary(uint64_t begin, uint64_t end) {
    const uint64_t offset = array_.ByteOffset(begin), length = (end - begin) * array_.itemsize();
    if (map_ != nullptr && map_->AllPagesCached(offset, length)) {
      RawPiece piece{begin, end};
      piece.byte_begin = offset;
      piece.bytes = map_->data() + offset;
      piece.mapped = true;
      return RawSummary(piece);
    }
    std::vector<char> bytes(length);
    Status read = array_io_.Read(array_.ByteOffset(begin), bytes.size(), bytes.data());
    c_.array_bytes += bytes.size();
    c_.requests += 1;
    if (!read.ok()) {
      Fail(std::move(read));
      return RangeSummary(order_);
    }
    return OfSlices(bytes.data(), end - begin);
  }

  MomentTree& tree_;
  ArrayFile& array_;
  IoBackend& array_io_;    // the query's backend for the array (QueryIo)
  const MappedFile* map_;  // the array's mapping (mapped pieces are there); null: everything is read
  const TreeLayout& layout_;
  const int order_;
  const NodeReads& nodes_;
  size_t complement_source_;  // the node source of the next complement leaf
  const bool need_extremes_;  // else raw pieces skip their min/max pass
  QueryCost& c_;
  // Room for min(n, kSlice) converted elements (grown, never shrunk: the
  // batch's pieces share it).
  void Scratch(uint64_t n) { scratch_.Reserve(std::min(n, kSlice)); }
  ScratchDoubles& scratch_;
  Status status_;
};

RangeSummary Combiner::PieceSummary(const RawPiece& r, bool left_side) {
  if (r.zeros) return Zeros(order_, r.end - r.begin, need_extremes_);
  if (!r.complement) return RawSummary(r);
  const RangeSummary leaf = NodeSummary(nodes_.sources[complement_source_++], 0);
  const RangeSummary complement = RawSummary(r);
  RangeSummary part = left_side ? UnmergeRight(leaf, complement) : UnmergeLeft(leaf, complement);
  // Subtracting sums of squares cancels: part = leaf − complement keeps
  // Σ(a − mean)² only to ~2^-50 of the sums subtracted (plus the leaf's
  // update drift, kDriftLimit of its own). When that is not within 1e-10
  // of the part's own Σ(a − mean)² — the part's values much closer
  // together than the leaf's, e.g. a run of zeros beside large values —
  // the part is read and summarized itself: one more read, only then.
  //   error = kDriftLimit · C(leaf) + 2^-50 · (|D(leaf)| + |D(complement)|)
  //   read directly when error > 1e-10 · C(part)
  // with C = central_sum_of_squares() and D = sum_of_squared_deviations()
  // about the leaf's shift.
  // The contract this keeps (docs/accuracy.md, "Subtractions that could
  // cancel"): nothing outside [p, q) reaches the answer's error. When the
  // subtraction is used, every cell of the leaf lies within sqrt(1.1e5·C(part))
  // of the shift, so the part's variance is within 1e-10 of itself and its
  // sum within ~1e-10 of its own Σ|a| (a spike in the complement always trips
  // the test). A subtraction at a larger node must tighten the 1e-10 as its
  // count grows (the sum's margin is 2·sqrt(2^-50·count·threshold)).
  if (part.values.count() > 0 && leaf.values.count() > 0) {
    const long double leaf_s2 = std::fabs(leaf.values.sum_of_squared_deviations());
    const long double complement_s2 =
        complement.values.count() > 0
            ? std::fabs(complement.values.RecenteredAt(leaf.values.shift()).sum_of_squared_deviations())
            : 0.0L;
    const long double error = kDriftLimit * leaf.values.central_sum_of_squares() + 0x1p-50L * (leaf_s2 + complement_s2);
    if (error > 1e-10L * part.values.central_sum_of_squares()) {
      const uint64_t leaf_first = layout_.node_first(1, r.leaf), leaf_end = layout_.node_end(1, r.leaf);
      part = left_side ? DirectSummary(r.end, leaf_end) : DirectSummary(leaf_first, r.begin);
    }
  }
  return part;
}

// One range of a batch between its planning and its answer.
struct PlannedQuery {
  TreeLayout::Plan plan;
  std::vector<RawPiece> raw;
  std::vector<ReadRequest> array_reads;
  NodeReads nodes;
};

// Steps 1-3 of a query: what it reads. Empty ranges plan nothing.
void PlanQuery(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q, bool need_extremes, PlannedQuery& out,
               QueryCost& c) {
  assert(p <= q && q <= array.length());
  c = QueryCost{};
  if (p == q) return;
  const TreeLayout& layout = tree.layout();
  out.plan = layout.Decompose(p, q);
  // 1. The raw pieces, on their shorter side where that is allowed.
  std::vector<NodeRef> witnesses;
  out.raw = PlanRawPieces(tree, out.plan, need_extremes, &witnesses);
  // 2. Array reads, widened to aligned pages.
  out.array_reads = PlanArrayReads(array, out.raw);
  // 3. Disk-tier reads: every run below the RAM tier, and the leaves the
  // shorter-side pieces subtract from.
  out.nodes = PlanNodeReads(tree, out.plan, out.raw, c);
  out.nodes.witnesses.insert(out.nodes.witnesses.end(), witnesses.begin(), witnesses.end());
  for (const ReadRequest& r : out.array_reads) c.array_bytes += r.length;
  c.requests = out.array_reads.size() + out.nodes.reads.size();
}

// Steps 5-6, once the planned reads landed (their bytes pointed to).
Result<RangeSummary> FinishQuery(MomentTree& tree, ArrayFile& array, IoBackend& array_io, const MappedFile* map,
                                 uint64_t p, uint64_t q, const PlannedQuery& planned, bool need_extremes,
                                 uint64_t epoch, QueryCost& c, ScratchDoubles& scratch) {
  const int order = tree.order();
  if (p == q) return RangeSummary(order);
  const TreeLayout::Plan& plan = planned.plan;
  const NodeReads& nodes = planned.nodes;
  const std::vector<RawPiece>& raw = planned.raw;
  // 5. Every node the answer takes passes its check first (a run of
  // siblings shares one parent: the memo checks it once).
  // A node this process already found good at this write_epoch is not
  // checked again (MomentTree::VerifyNodeOnce).
  Combiner combine(tree, array, array_io, map, nodes, plan.runs.size(), need_extremes, c, scratch);
  for (const NodeRef& w : nodes.witnesses)
    MOMENTA_RETURN_IF_ERROR(tree.VerifyNodeOnce(w.level, w.index, tree.Node(w.level, w.index), epoch));
  // Runs of holes the RAM tier vouches for are not summed, but their nodes
  // (read with the others) are still checked: a damaged hole is never taken
  // for zeros.
  for (const NodeSource& s : nodes.sources) {
    MomentTree::ParentMemo memo;
    for (uint64_t k = 0; k < s.count; ++k)
      MOMENTA_RETURN_IF_ERROR(tree.VerifyNodeOnce(s.level, s.first + k, combine.NodeBytes(s, k), epoch, &memo));
  }

  // 6. Combine left to right, a run of sibling nodes at a time.
  RangeSummary acc(order);
  size_t next_raw = 0;
  const bool has_left = plan.raw_left_end > plan.raw_left_begin;
  if (has_left) acc = combine.PieceSummary(raw[next_raw++], /*left_side=*/true);
  for (size_t s = 0; s < plan.runs.size(); ++s) acc = Merge(acc, combine.RunSummary(nodes.sources[s]));
  if (next_raw < raw.size()) acc = Merge(acc, combine.PieceSummary(raw[next_raw++], /*left_side=*/false));
  MOMENTA_RETURN_IF_ERROR(combine.status());
  return acc;
}

// A batch's array reads split by residency: those whose pages are all in
// the page cache (one mincore each, no device round) are pointed into the
// mapping; the others become `misses`, the batch's reads. Without a mapping
// everything is a miss.
struct ResidentSplit {
  std::vector<const char*> mapped;  // per read: its first byte in the mapping, or null
  std::vector<size_t> miss_of;      // per read: its index in misses, or SIZE_MAX
  std::vector<ReadRequest> misses;
  ResidentSplit(const MappedFile* map, std::span<const ReadRequest> reads)
      : mapped(reads.size(), nullptr), miss_of(reads.size(), SIZE_MAX) {
    for (size_t i = 0; i < reads.size(); ++i) {
      if (map != nullptr && map->AllPagesCached(reads[i].offset, reads[i].length)) {
        mapped[i] = map->data() + reads[i].offset;
        continue;
      }
      miss_of[i] = misses.size();
      misses.push_back(reads[i]);
    }
  }
};

}  // namespace

Result<RangeSummary> SummarizeRange(MomentTree& tree, ArrayFile& array, uint64_t p, uint64_t q, bool need_extremes,
                                    QueryCost* cost) {
  assert(p <= q && q <= array.length());
  const IndexRange range{p, q};
  std::vector<RangeSummary> out;
  std::vector<QueryCost> costs;
  MOMENTA_RETURN_IF_ERROR(SummarizeRanges(tree, array, {&range, 1}, need_extremes, &out, &costs));
  if (cost) *cost = costs[0];
  return std::move(out[0]);
}

Status SummarizeRanges(MomentTree& tree, ArrayFile& array, std::span<const IndexRange> ranges, bool need_extremes,
                       std::vector<RangeSummary>* out, std::vector<QueryCost>* costs, QueryIo io, QueryCost* read) {
  IoBackend& array_io = io.array ? *io.array : array.io();
  IoBackend& tree_io = io.tree ? *io.tree : tree.io();
  ReadArena local_arena;
  ReadArena& arena = io.arena ? *io.arena : local_arena;
  std::vector<QueryCost> local;
  std::vector<QueryCost>& c = costs ? *costs : local;
  c.assign(ranges.size(), QueryCost{});
  // Before any node is read: a node found good is recorded at this epoch.
  const uint64_t epoch = tree.ReadEpoch();
  // 1-3. Each range's plan; its reads appended to the batch's.
  std::vector<PlannedQuery> planned(ranges.size());
  std::vector<ReadRequest> array_reads, node_reads;
  std::vector<size_t> array_base(ranges.size()), node_base(ranges.size());
  for (size_t k = 0; k < ranges.size(); ++k) {
    assert(ranges[k].begin <= ranges[k].end && ranges[k].end <= array.length());
    PlanQuery(tree, array, ranges[k].begin, ranges[k].end, need_extremes, planned[k], c[k]);
    array_base[k] = array_reads.size();
    node_base[k] = node_reads.size();
    array_reads.insert(array_reads.end(), planned[k].array_reads.begin(), planned[k].array_reads.end());
    node_reads.insert(node_reads.end(), planned[k].nodes.reads.begin(), planned[k].nodes.reads.end());
  }
  // 4. The array pieces whose pages are all cached are summed from the
  // mapping; the others, and the disk-tier nodes, are read as one batch,
  // overlapping and touching reads merged, into one arena: each piece's
  // bytes are then found where they landed.
  const MappedFile* map = array_io.maps_resident() ? array.ReadMapping() : nullptr;
  const ResidentSplit split(map, array_reads);
  if (internal::g_after_residency_check) internal::g_after_residency_check();
  CoalescedReads array_batch(split.misses), node_batch(node_reads);
  if (array_batch.bytes() + node_batch.bytes() > 0) {
    char* memory = arena.Reserve(array_batch.bytes() + node_batch.bytes());
    if (memory == nullptr) return Status::IOError(array.path(), "out of memory for a batch of queries");
    array_batch.Place(memory);
    node_batch.Place(memory + array_batch.bytes());
    MOMENTA_RETURN_IF_ERROR(array_io.ReadBatchWith(array_batch.reads(), tree_io, node_batch.reads()));
  }
  QueryCost device;
  for (const ReadRequest& r : array_batch.reads()) device.array_bytes += r.length;
  for (const ReadRequest& r : node_batch.reads()) device.tier_bytes += r.length;
  device.requests = array_batch.reads().size() + node_batch.reads().size();
  out->clear();
  out->reserve(ranges.size());
  ScratchDoubles scratch;
  for (size_t k = 0; k < ranges.size(); ++k) {
    for (RawPiece& r : planned[k].raw) {
      if (r.read == SIZE_MAX) continue;
      const size_t at = array_base[k] + r.read;
      r.mapped = split.mapped[at] != nullptr;
      r.bytes = r.mapped ? split.mapped[at] : array_batch.Where(split.miss_of[at]);
    }
    for (NodeSource& s : planned[k].nodes.sources)
      if (s.read != SIZE_MAX) s.data = reinterpret_cast<const double*>(node_batch.Where(node_base[k] + s.read));
    const QueryCost planned_cost = c[k];
    auto summary = FinishQuery(tree, array, array_io, map, ranges[k].begin, ranges[k].end, planned[k], need_extremes,
                               epoch, c[k], scratch);
    // A piece read on its own (the direct fallback) went to the device too.
    device.array_bytes += c[k].array_bytes - planned_cost.array_bytes;
    device.requests += c[k].requests - planned_cost.requests;
    device.ram_nodes += c[k].ram_nodes;
    if (!summary.ok()) {
      if (read) *read += device;
      return summary.status();
    }
    out->push_back(std::move(summary).value());
  }
  if (read) *read += device;
  return Status::OK();
}

namespace internal {
std::function<void()> g_after_residency_check;
}  // namespace internal

void SetAfterResidencyCheckForTesting(std::function<void()> hook) {
  internal::g_after_residency_check = std::move(hook);
}

}  // namespace momenta
