// BufferedArray: queries, updates, commits, rebuilds. Opening and recovery
// are in buffer_open.cc.
#include "buffers/buffered_array.h"

#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "buffers/buffer_internal.h"
#include "storage/cancel.h"
#include "storage/fault_guard.h"
#include "storage/log_codec.h"
#include "storage/log_reader.h"
#include "storage/log_segments.h"

namespace momenta {
namespace {

// Updates applied between two points where readers may get in.
constexpr size_t kChunk = 4096;
// Log records between two checkpoints of the buffer (besides Close).
constexpr uint64_t kCheckpointEveryRecords = uint64_t{1} << 22;
// Changed nodes remembered per level before they are resealed early.
constexpr size_t kMaxTouched = size_t{1} << 16;
// How long a starved reader asks writers to stand still.
constexpr int64_t kReaderWaitNs = 20'000'000;
// How often a reader whose seqlock stays taken checks that the writer lives.
constexpr int64_t kLivenessCheckNs = 20'000'000;

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::atomic_ref<uint64_t> Epoch(TreeFileHeader& h) { return std::atomic_ref<uint64_t>(h.write_epoch); }
std::atomic_ref<int64_t> ReaderWait(TreeFileHeader& h) {
  return std::atomic_ref<int64_t>(h.reader_wait_until_ns);
}

}  // namespace

BufferedArray::BufferedArray(std::unique_ptr<ArrayFile> array, std::string sidecar,
                             const BufferedArrayOptions& options)
    : array_(std::move(array)), sidecar_(std::move(sidecar)), tree_path_(sidecar_ + "/tree"), options_(options) {}

BufferedArray::~BufferedArray() { (void)Close(); }

Status BufferedArray::Close() {
  if (!log_ || !tree_) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(log_->Commit());
  return Checkpoint();
}

// ---- queries ------------------------------------------------------------------

bool BufferedArray::IsTreeDamage(const Status& s) const {
  return s.code() == Status::Code::kCorruption && s.ToString().find(tree_path_) != std::string::npos;
}

Result<RangeSummary> BufferedArray::Summarize(uint64_t p, uint64_t q, bool need_extremes,
                                              QueryCost* cost, uint64_t* as_of) {
  if (p > q || q > array_->length())
    return Status::OutOfRange(array_->path(), "range " + std::to_string(p) + ":" + std::to_string(q) +
                                                  " is outside the array (length " +
                                                  std::to_string(array_->length()) + ")");
  bool rebuilt = false;  // at most one rebuild for damage per query
  if (log_) {  // the writer itself: nothing runs beside it in this object
    if (as_of) *as_of = tree_->header().log_sequence;
    auto summary = SummarizeRange(*tree_, *array_, p, q, need_extremes, cost);
    if (summary.ok() || !IsTreeDamage(summary.status())) return summary;
    late_notices_.push_back("rebuilding the moment buffer of " + array_->path() + ": " +
                            summary.status().ToString());
    BuildStats stats;
    MOMENTA_RETURN_IF_ERROR(RebuildInPlace(OptionsOfHeader(tree_->header()), options_.progress, &stats));
    return SummarizeRange(*tree_, *array_, p, q, need_extremes, cost);
  }
  // A reader: retry until no writer changed anything while we read.
  const int64_t start = MonotonicNs();
  int64_t next_liveness_check = start + kLivenessCheckNs;
  for (int attempt = 0;; ++attempt) {
    MOMENTA_RETURN_IF_ERROR(ReopenTreeIfRetired());
    TreeFileHeader& h = tree_->header();
    const uint64_t before = Epoch(h).load(std::memory_order_acquire);
    if (before % 2 == 0) {
      const uint64_t sequence = std::atomic_ref<uint64_t>(h.log_sequence).load(std::memory_order_acquire);
      auto summary = SummarizeRange(*tree_, *array_, p, q, need_extremes, cost);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (Epoch(h).load(std::memory_order_acquire) == before) {
        if (summary.ok() || !IsTreeDamage(summary.status())) {
          if (as_of) *as_of = sequence;
          return summary;
        }
        // A node failed its check (the read was consistent, so it is damage,
        // not a writer's chunk): rebuild, then answer from the new buffer.
        if (rebuilt) return summary.status();
        rebuilt = true;
        forced_rebuild_ = summary.status().ToString();
        const Status s = RecoverAsWriter({BufferCondition::Kind::kRebuild, forced_rebuild_}, &late_notices_);
        forced_rebuild_.clear();
        MOMENTA_RETURN_IF_ERROR(s);
        continue;
      }
    }
    // Never wait on a writer that is not alive: a killed one leaves the
    // seqlock taken for good. Its lock tells (the kernel drops it at death).
    if (const int64_t now = MonotonicNs(); now >= next_liveness_check) {
      next_liveness_check = now + kLivenessCheckNs;
      if (Epoch(h).load(std::memory_order_acquire) % 2 == 1 && !WriterIsAlive(LockPath())) {
        BufferCondition dead{BufferCondition::Kind::kRecover, "the last writer stopped mid-update"};
        late_notices_.push_back("the writer of " + array_->path() + " died while this query waited for it");
        MOMENTA_RETURN_IF_ERROR(RecoverAsWriter(dead, &late_notices_));
        continue;
      }
    }
    if (attempt >= 2 && tree_writable_)
      ReaderWait(h).store(MonotonicNs() + kReaderWaitNs, std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::microseconds(attempt < 2 ? 50 : 500));
  }
}

// ---- updates ------------------------------------------------------------------

Status BufferedArray::CheckWritable() const {
  if (log_) return Status::OK();
  return Status::InvalidArgument(array_->path(), "opened read-only; updates need a writable open");
}

Status BufferedArray::MapArrayForUpdates() {
  if (array_map_) return Status::OK();
  InstallFaultGuard();
  auto map = MappedFile::Open(array_->path(), /*writable=*/true);
  if (!map.ok()) return map.status();
  if ((*map)->size() < array_->ByteOffset(array_->length()))
    return Status::IOError(array_->path(), "file is shorter than its header says (it shrank?)");
  array_map_ = std::move(map).value();
  scattered_ = std::make_unique<ScatteredStores>(array_map_.get());
  return Status::OK();
}

Status BufferedArray::MappedAccessFailed(uint64_t index, bool writing) const {
  struct statvfs fs;
  const bool full = ::statvfs(array_->path().c_str(), &fs) == 0 && fs.f_bavail == 0;
  if (full) return Status::FromErrno(array_->path(), ENOSPC);
  return Status::IOError(array_->path(), std::string("cannot ") + (writing ? "write" : "read") +
                                             " element " + std::to_string(index) +
                                             " (the file shrank, or the disk is full)");
}

Status BufferedArray::Write(uint64_t first, std::span<const Value> values, int64_t time) {
  MOMENTA_RETURN_IF_ERROR(CheckWritable());
  MOMENTA_RETURN_IF_ERROR(array_->CheckRange(first, values.size()));
  const DType t = array_->dtype();
  for (const Value& v : values)
    if (!ValueFits(t, v))
      return Status::InvalidArgument(array_->path(), "value '" + FormatValue(v) +
                                                         "' does not fit dtype " + std::string(DTypeName(t)));
  // A consecutive range reserves its blocks in one call; the file system
  // undoes a reservation that does not fit, so a full disk changes nothing.
  MOMENTA_RETURN_IF_ERROR(MarkDirty());  // fallocate may move the array's mtime
  if (Status s = array_->io().Allocate(array_->ByteOffset(first), values.size() * array_->itemsize()); !s.ok())
    return s.WithNote("nothing was applied");
  std::vector<IndexedValue> updates(values.size());
  for (size_t k = 0; k < values.size(); ++k) updates[k] = {first + k, values[k], time};
  return ApplyUpdates(updates, /*prefault=*/false);
}

Status BufferedArray::Apply(std::span<const IndexedValue> updates, size_t* applied) {
  return ApplyUpdates(updates, /*prefault=*/true, applied);
}

Status BufferedArray::ApplyUpdates(std::span<const IndexedValue> updates, bool prefault, size_t* applied) {
  size_t unused = 0;
  if (!applied) applied = &unused;
  *applied = 0;
  MOMENTA_RETURN_IF_ERROR(CheckWritable());
  const DType t = array_->dtype();
  for (const IndexedValue& u : updates) {
    MOMENTA_RETURN_IF_ERROR(array_->CheckRange(u.index, 1));
    if (!ValueFits(t, u.value))
      return Status::InvalidArgument(array_->path(), "value '" + FormatValue(u.value) +
                                                         "' does not fit dtype " + std::string(DTypeName(t)));
  }
  if (updates.empty()) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(MapArrayForUpdates());
  MOMENTA_RETURN_IF_ERROR(MarkDirty());
  // Chunks of distinct indices (an index repeated within a chunk would read
  // its old value before the earlier update of the same chunk landed).
  std::vector<size_t> chunk_ends;
  {
    std::unordered_set<uint64_t> seen;
    for (size_t end = 0; end < updates.size();) {
      seen.clear();
      const size_t begin = end;
      while (end < updates.size() && end - begin < kChunk && seen.insert(updates[end].index).second) ++end;
      chunk_ends.push_back(end);
    }
  }
  // All or nothing: everything the updates need is reserved before the first
  // change, so a full disk fails here and leaves array, buffer and log as
  // they were.
  if (Status s = ReserveForUpdates(updates, chunk_ends.size(), prefault); !s.ok())
    return s.WithNote("nothing was applied: none of the " + std::to_string(updates.size()) +
                      " updates is in the array or the log");
  const uint64_t first_sequence = log_->next_sequence();
  size_t begin = 0;
  for (const size_t end : chunk_ends) {
    *applied = begin;
    MOMENTA_RETURN_IF_ERROR(CheckCancel(array_->path()));  // between chunks: consistent
    size_t done = 0;
    if (Status s = ApplyChunk(updates.subspan(begin, end - begin), &done); !s.ok()) {
      // Past the reservations only an I/O error gets here: say what stays.
      const uint64_t logged_end = log_->next_sequence();
      if (logged_end == first_sequence) return s.WithNote("nothing was applied");
      return s.WithNote("the first " + std::to_string(begin) + " of " + std::to_string(updates.size()) +
                        " updates were applied; the log holds sequences " + std::to_string(first_sequence) +
                        ".." + std::to_string(logged_end - 1) + " of them, which recovery completes");
    }
    begin = end;
  }
  *applied = updates.size();
  return Status::OK();
}

Status BufferedArray::ReserveForUpdates(std::span<const IndexedValue> updates, size_t chunks, bool prefault) {
  // 1. The log: frames and sequence numbers for every update (an unchanged
  //    value takes less than its share).
  MOMENTA_RETURN_IF_ERROR(log_->Reserve(updates.size(), chunks));
  // 2. The buffer: the page of every node the updates touch (the tree file is
  //    sparse: a node's page may be a hole).
  const TreeLayout& layout = tree_->layout();
  for (const IndexedValue& u : updates)
    for (int level = 1; level <= layout.levels(); ++level)
      MOMENTA_RETURN_IF_ERROR(tree_->AllocateNodes(level, layout.NodeOf(level, u.index), 1));
  // 3. The array. Every element's page made writable, by storing its own
  //    bytes back: a hole on a full disk (or a file truncated under us) fails
  //    here (holes filled before the one that failed stay allocated, as zeros).
  const size_t item = array_->itemsize();
  char* const base = array_map_->data();
  // Scattered stores need base pages under them (Prepare); a consecutive
  // range (Write) overwrites the blocks inside it whole, only its end blocks
  // may be partial.
  if (!prefault && !updates.empty()) {
    scattered_->Prepare(array_->ByteOffset(updates.front().index));
    scattered_->Prepare(array_->ByteOffset(updates.back().index));
  }
  for (const IndexedValue& u : prefault ? updates : std::span<const IndexedValue>()) {
    char bytes[8];
    scattered_->Prepare(array_->ByteOffset(u.index));
    char* element = base + array_->ByteOffset(u.index);
    if (!GuardedCopy(bytes, element, item)) return MappedAccessFailed(u.index, /*writing=*/false);
    if (!GuardedCopy(element, bytes, item)) return MappedAccessFailed(u.index, /*writing=*/true);
  }
  return Status::OK();
}

Status BufferedArray::ApplyChunk(std::span<const IndexedValue> chunk, size_t* done) {
  const DType t = array_->dtype();
  const size_t item = array_->itemsize();
  char* const base = array_map_->data();
  // 1. Old values (pages were made writable by Apply; a store may still
  //    fault if the file was truncated since).
  records_.clear();
  Status stop;
  for (const IndexedValue& u : chunk) {
    char* element = base + array_->ByteOffset(u.index);
    char old_bytes[8] = {}, new_bytes[8] = {};
    if (!GuardedCopy(old_bytes, element, item)) {
      stop = MappedAccessFailed(u.index, /*writing=*/false);
      break;
    }
    EncodeValue(t, u.value, new_bytes);
    if (std::memcmp(old_bytes, new_bytes, item) == 0) continue;  // no change, no record
    if (!GuardedCopy(element, old_bytes, item)) {
      stop = MappedAccessFailed(u.index, /*writing=*/true);
      break;
    }
    LogRecord r;
    r.time = u.time;
    r.index = u.index;
    std::memcpy(&r.old_raw, old_bytes, item);
    std::memcpy(&r.new_raw, new_bytes, item);
    records_.push_back(r);
  }
  if (records_.empty()) return stop;
  // 2. The log first: once Append returns, the updates survive a crash (per policy).
  auto first = log_->Append(records_);
  if (!first.ok()) return first.status();
  // 3. The array and the buffer.
  MOMENTA_RETURN_IF_ERROR(BeginChunk());
  TreeFileHeader& h = tree_->header();
  h.chunk_first_sequence = *first;
  for (size_t k = 0; k < records_.size(); ++k) {
    const LogRecord& r = records_[k];
    char* element = base + array_->ByteOffset(r.index);
    if (!GuardedCopy(element, reinterpret_cast<const char*>(&r.new_raw), item)) {
      // Logged but not applied: recovery will apply it from the log.
      (void)EndChunk();
      return MappedAccessFailed(r.index, /*writing=*/true);
    }
    MOMENTA_RETURN_IF_ERROR(ApplyToTree(r.index, reinterpret_cast<const char*>(&r.old_raw),
                                        reinterpret_cast<const char*>(&r.new_raw)));
    std::atomic_ref<uint64_t>(h.log_sequence).store(*first + k, std::memory_order_release);
    h.updates_since_build++;
  }
  *done = records_.size();
  MOMENTA_RETURN_IF_ERROR(EndChunk());
  return stop;
}

Status BufferedArray::BeginChunk() {
  TreeFileHeader& h = tree_->header();
  // A reader that kept losing the race asked for a pause: give it one.
  const int64_t wait_until = ReaderWait(h).load(std::memory_order_acquire);
  const int64_t now = MonotonicNs();
  if (wait_until > now && wait_until - now <= kReaderWaitNs)
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait_until - now));
  MOMENTA_RETURN_IF_ERROR(MarkDirty());
  refresh_.assign(tree_->layout().levels() + 1, {});
  SizeTouchedForTree();  // a rebuild may have changed the layout since the last chunk
  Epoch(h).fetch_add(1, std::memory_order_acq_rel);  // odd: changing
  return Status::OK();
}

Status BufferedArray::MarkDirty() {
  if (dirty_) return Status::OK();
  // The first change since the last checkpoint: the header must say so (on
  // disk, unless kNone) before the log grows or any page of the array or the
  // nodes changes — even a store of unchanged bytes moves the array's mtime —
  // or recovery would take the buffer for clean and the array for changed
  // behind its back.
  tree_->header().state = kTreeUpdating;
  if (options_.sync != LogSync::kNone) MOMENTA_RETURN_IF_ERROR(tree_->FlushHeader());
  dirty_ = true;
  return Status::OK();
}

Status BufferedArray::EndChunk() {
  Status s = FlushRefreshes();
  TreeFileHeader& h = tree_->header();
  auto identity = IdentityOf(array_->path());
  if (identity.ok()) h.array = *identity;
  Epoch(h).fetch_add(1, std::memory_order_acq_rel);  // even: consistent
  if (!s.ok()) return s;
  return identity.status();
}

Status BufferedArray::Commit() {
  if (!log_) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(log_->Commit());
  // The log alone makes updates durable; checkpoints only bound how much of
  // it recovery after a machine crash must replay.
  const TreeFileHeader& h = tree_->header();
  if (h.log_sequence - h.checkpoint_sequence >= kCheckpointEveryRecords) return Checkpoint();
  return Status::OK();
}

Status BufferedArray::Checkpoint() {
  if (!dirty_) return Status::OK();
  TreeFileHeader& h = tree_->header();
  if (options_.sync != LogSync::kNone) {
    // Checkpoint: array and nodes on disk, then a header that says so.
    MOMENTA_RETURN_IF_ERROR(array_->Sync());
    MOMENTA_RETURN_IF_ERROR(tree_->Flush());
  }
  auto identity = IdentityOf(array_->path());
  if (!identity.ok()) return identity.status();
  h.array = *identity;
  h.checkpoint_sequence = h.log_sequence;
  tree_->MarkClean();
  if (options_.sync != LogSync::kNone) MOMENTA_RETURN_IF_ERROR(tree_->FlushHeader());
  dirty_ = false;
  return PruneLog();
}

Status BufferedArray::PruneLog() {
  if (!log_ || options_.retain_ms < 0) return Status::OK();
  auto segments = ListLogSegments(log_->dir());
  if (!segments.ok()) return segments.status();
  const int64_t cutoff =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count() - options_.retain_ms;
  uint64_t keep_from = 0;
  for (size_t i = 0; i + 1 < segments->size(); ++i) {
    const uint64_t next_first = (*segments)[i + 1].first_sequence;
    if (next_first - 1 > tree_->header().checkpoint_sequence) break;  // recovery may still need it
    LogReaderOptions ro;
    ro.from_sequence = next_first;
    auto reader = LogReader::Open(log_->dir(), ro);
    if (!reader.ok()) return reader.status();
    LogRecord first;
    auto more = (*reader)->Next(&first);
    if (!more.ok()) return more.status();
    if (!*more || first.time >= cutoff) break;  // this segment may hold records inside the window
    keep_from = next_first;
  }
  if (keep_from == 0) return Status::OK();
  auto dropped = log_->DropSegmentsBefore(keep_from);
  return dropped.status();
}

Status BufferedArray::RefreshLeaf(uint64_t leaf) {
  const TreeLayout& layout = tree_->layout();
  const uint64_t first = layout.node_first(1, leaf);
  const uint64_t n = layout.node_end(1, leaf) - first;
  leaf_scratch_.resize(n * array_->itemsize());
  leaf_doubles_.resize(n);
  // A writer reads through its mapping: the page cache as it is. (The I/O
  // backend may read with O_DIRECT, which first writes the leaf's dirty pages
  // back and waits, and leaves them clean for the next store to fault on.)
  if (array_map_) {
    array_map_->Prefetch(array_->ByteOffset(first), n * array_->itemsize());
    if (!GuardedCopy(leaf_scratch_.data(), array_map_->data() + array_->ByteOffset(first), n * array_->itemsize()))
      return MappedAccessFailed(first, /*writing=*/false);
  } else {
    MOMENTA_RETURN_IF_ERROR(array_->ReadRaw(first, n, leaf_scratch_.data()));
  }
  const RangeSummary fresh =
      RangeSummary::OfElements(tree_->order(), array_->dtype(), leaf_scratch_.data(), n, leaf_doubles_.data());
  tree_->codec().Encode(fresh, tree_->Slot(1, leaf), tree_->Node(1, leaf));
  // A parent's mask is recomputed with the parent (FlushRefreshes queues it);
  // the top level's is the header's.
  if (layout.levels() == 1) return tree_->MarkWritten(1, leaf);
  return Status::OK();
}

Status BufferedArray::ApplyToTree(uint64_t index, const char* old_bytes, const char* new_bytes) {
  const DType t = array_->dtype();
  const double old_value = DecodeDouble(t, old_bytes);
  const double new_value = DecodeDouble(t, new_bytes);
  Int128 exact_delta = 0;
  if (DTypeIsInteger(t)) {
    const Value o = DecodeValue(t, old_bytes), n = DecodeValue(t, new_bytes);
    auto wide = [](const Value& v) -> Int128 {
      return v.kind == Value::Kind::kUInt ? static_cast<Int128>(v.u) : static_cast<Int128>(v.i);
    };
    exact_delta = wide(n) - wide(o);
  }
  const TreeLayout& layout = tree_->layout();
  const NodeCodec& codec = tree_->codec();
  if (touched_tree_ != tree_.get()) SizeTouchedForTree();  // (chunks check the layout itself)
  // Checks: a node changed here is listed once (a bit per node) and
  // resealed once at the chunk's end (FlushRefreshes), not per update: a
  // check costs a CRC of the node, an update a few dozen multiply-adds. The
  // trade-off (storage/ON_DISK.md): checks are stale while a chunk runs
  // (readers retry on the epoch anyway); measured, listing and sealing add
  // 3.8% to a warm hot-range update (instructions). A node written for the first time (it
  // was a hole) is recorded in its parent's children mask, which this update
  // changes next (or in the header's top_mask), so a node zeroed later by
  // damage is not taken for a hole.
  int64_t new_child = -1;  // the node below was a hole: its bit in this level's node
  for (int level = 1; level <= layout.levels(); ++level) {
    const uint64_t j = layout.NodeOf(level, index);
    const uint64_t first = layout.node_first(level, j);
    const uint64_t count = layout.node_end(level, j) - first;
    MOMENTA_RETURN_IF_ERROR(tree_->AllocateNodes(level, j, 1));
    double* node = tree_->Node(level, j);
    if (new_child >= 0) codec.SetChild(node, static_cast<uint32_t>(new_child));
    const bool was_hole = codec.Check(node) == 0;  // (or changed since, in this chunk)
    const NodeCodec::UpdateOutcome outcome =
        codec.ApplyUpdate(node, count, index - first, old_value, new_value, exact_delta);
    new_child = was_hole ? static_cast<int64_t>(j % layout.fanout()) : -1;
    if (was_hole && level == layout.levels()) MOMENTA_RETURN_IF_ERROR(tree_->MarkWritten(level, j));
    uint64_t& word = touched_bits_[level][j / 64];
    if (!((word >> (j % 64)) & 1)) {  // listed once per chunk
      word |= uint64_t{1} << (j % 64);
      touched_[level].push_back(j);
      if (touched_[level].size() >= kMaxTouched) SealTouched(level);  // a long replay: bound the list
    }
    // Drift past the limit, or an extreme that may have shrunk: recompute the
    // node from data when the chunk ends (the array may already hold later
    // values of this chunk that the tree has not seen yet).
    if (outcome.drifted || outcome.extremes_may_shrink) refresh_[level].push_back(j);
  }
  return Status::OK();
}

void BufferedArray::QueueRefresh(uint64_t index) {
  const TreeLayout& layout = tree_->layout();
  for (int level = 1; level <= layout.levels(); ++level) refresh_[level].push_back(layout.NodeOf(level, index));
}

void BufferedArray::SizeTouchedForTree() {
  // Sized for the tree's layout; a rebuild may change it: start afresh (what
  // was listed belonged to the old file).
  const TreeLayout& layout = tree_->layout();
  const std::array<uint64_t, 4> shape = {static_cast<uint64_t>(layout.levels()), layout.leaf_span(),
                                         layout.fanout(), layout.length()};
  touched_tree_ = tree_.get();
  if (shape == touched_shape_) return;
  touched_shape_ = shape;
  touched_.assign(layout.levels() + 1, {});
  touched_bits_.assign(layout.levels() + 1, {});
  for (int level = 1; level <= layout.levels(); ++level) touched_bits_[level].assign(layout.nodes(level) / 64 + 1, 0);
}

void BufferedArray::SealTouched(int level) {
  std::vector<uint64_t>& nodes = touched_[level];
  for (uint64_t j : nodes) {
    tree_->codec().Seal(tree_->Slot(level, j), tree_->Node(level, j));
    touched_bits_[level][j / 64] &= ~(uint64_t{1} << (j % 64));
  }
  nodes.clear();
}

Status BufferedArray::FlushRefreshes() {
  SizeTouchedForTree();
  const TreeLayout& layout = tree_->layout();
  const int levels = static_cast<int>(std::max(refresh_.size(), touched_.size())) - 1;
  auto sorted = [](std::vector<uint64_t>& nodes) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  };
  // Level by level: a level's changed nodes are resealed before its
  // recomputed ones are merged from the level below, whose checks say which
  // children were written.
  for (int level = 1; level <= levels; ++level) {
    if (level < static_cast<int>(touched_.size())) SealTouched(level);
    if (level >= static_cast<int>(refresh_.size())) continue;
    std::vector<uint64_t>& nodes = refresh_[level];
    sorted(nodes);
    for (uint64_t j : nodes) {
      MOMENTA_RETURN_IF_ERROR(level == 1 ? RefreshLeaf(j) : RecomputeFromChildren(*tree_, level, j));
      if (level < layout.levels()) refresh_[level + 1].push_back(j / layout.fanout());
    }
    nodes.clear();
  }
  return Status::OK();
}

// ---- rebuild and verify ---------------------------------------------------------

Result<BuildStats> BufferedArray::Rebuild(const TreeOptions& options, const BuildProgress& progress) {
  if (!log_ && !lock_) {
    auto lock = LockArrayForWriting(array_->path(), sidecar_);
    if (!lock.ok()) return lock.status();
    lock_ = std::move(lock).value();
  }
  BuildStats stats;
  Status s = RebuildInPlace(options, progress, &stats);
  if (!log_) lock_.reset();
  if (!s.ok()) return s;
  return stats;
}

Result<VerifyReport> BufferedArray::Verify(const BuildProgress& progress) {
  // The scratch tree goes beside the buffer, or to $TMPDIR for a reader that
  // may not write there (verify only reads the array and the buffer).
  const char* tmp = std::getenv("TMPDIR");
  const std::string scratch = (SidecarWritable(sidecar_) ? tree_path_ : std::string(tmp && *tmp ? tmp : "/tmp") +
                                                                             "/momenta-tree") +
                              ".verify-" + std::to_string(::getpid());
  auto fresh = internal::BuildTreeFile(scratch, *array_, OptionsOfHeader(tree_->header()), options_.io,
                                       progress, nullptr);
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{scratch};
  if (!fresh.ok()) return fresh.status();
  VerifyReport report;
  const TreeLayout& layout = tree_->layout();
  const int order = tree_->order();
  for (int level = 1; level <= layout.levels(); ++level) {
    for (uint64_t j = 0; j < layout.nodes(level); ++j) {
      ++report.nodes_checked;
      MomentTree::ParentMemo memo;
      if (Status check = tree_->VerifyNode(level, j, tree_->Node(level, j), &memo); !check.ok()) {
        ++report.mismatches;
        if (report.examples.size() < 5) report.examples.push_back(check.ToString());
        continue;
      }
      const RangeSummary stored = tree_->Summary(level, j);
      const RangeSummary exact = (*fresh)->Summary(level, j);
      // Tolerances: the moments' own scale (a few ulps of long double after a
      // build; updates drift by ~N·2^-64, see moments.h).
      std::string what;
      for (int m = 0; m <= order && what.empty(); ++m) {
        const long double a = stored.index.moment(m), b = exact.index.moment(m);
        const long double scale = std::max(std::fabs(a), std::fabs(b));
        if (std::fabs(a - b) > 1e-9L * scale + 1e-300L) what = "index moment " + std::to_string(m);
      }
      const long double va = stored.values.central_sum_of_squares(), vb = exact.values.central_sum_of_squares();
      if (what.empty() && std::fabs(va - vb) > 1e-6L * std::max(std::fabs(va), std::fabs(vb)) + 1e-12L)
        what = "value variance term";
      if (what.empty() && exact.values.count() > 0) {
        const long double ma = stored.values.mean(), mb = exact.values.mean();
        if (std::fabs(ma - mb) > 1e-9L * std::max(std::fabs(ma), std::fabs(mb)) + 1e-300L) what = "value mean";
      }
      if (what.empty() && (stored.extremes.min != exact.extremes.min || stored.extremes.max != exact.extremes.max) &&
          !(std::isnan(exact.extremes.min) && std::isnan(stored.extremes.min)))
        what = "min/max";
      if (what.empty() && stored.exact_sum != exact.exact_sum) what = "exact integer sum";
      if (what.empty() && !(stored.nonfinite == exact.nonfinite)) what = "NaN and infinity counts";
      if (!what.empty()) {
        ++report.mismatches;
        if (report.examples.size() < 5)
          report.examples.push_back("level " + std::to_string(level) + " node " + std::to_string(j) +
                                    " (elements " + std::to_string(layout.node_first(level, j)) + ":" +
                                    std::to_string(layout.node_end(level, j)) + "): " + what);
      }
    }
  }
  return report;
}

}  // namespace momenta
