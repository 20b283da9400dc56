// BufferedArray: updates, commits, rebuilds. Queries are in buffer_query.cc,
// opening in buffer_open.cc, recovery in buffer_recover.cc, verify in
// buffer_verify.cc; the facade's forwarding in buffered_array.cc.
#include "buffers/buffered_array_internal.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "buffers/tree/index_set.h"
#include "buffers/tree/tree_maintenance.h"
#include "buffers/tree/tree_seqlock.h"
#include "storage/array/array_store.h"
#include "storage/io/extents.h"
#include "storage/io/scattered_stores.h"
#include "storage/log/log_retention.h"
#include "storage/util/cancel.h"

namespace momenta {
namespace {

// Updates applied between two points where readers may get in.
constexpr size_t kChunk = 4096;
// How many updates ahead the update loops ask the CPU for the element and
// the nodes they will change (random updates over a resident hot set miss
// the cache and the TLB on each: overlapped, not serial).
constexpr size_t kPrefetchAhead = 8;
// Scattered updates whose pages are asked for ahead of their chunk (a bound
// on the reads in flight and on what is read ahead of its stores).
constexpr size_t kFetchWindow = 8192;
// Log records between two checkpoints of the buffer (besides Close).
constexpr uint64_t kCheckpointEveryRecords = uint64_t{1} << 22;

// InvalidArgument naming the array unless `v` fits its dtype.
Status CheckFits(const ArrayFile& array, const Value& v) {
  if (ValueFits(array.dtype(), v)) return Status::OK();
  return Status::InvalidArgument(
      array.path(), "value '" + FormatValue(v) + "' does not fit dtype " + std::string(DTypeName(array.dtype())));
}

// Where `updates` are cut into chunks (each chunk's end): at most kChunk
// updates, with distinct indices (an index repeated within a chunk would read
// its old value before the earlier update of the same chunk landed).
std::vector<size_t> ChunkEnds(std::span<const IndexedValue> updates) {
  std::vector<size_t> ends;
  IndexSet seen(kChunk);
  for (size_t end = 0; end < updates.size();) {
    seen.clear();
    const size_t begin = end;
    while (end < updates.size() && end - begin < kChunk && seen.insert(updates[end].index)) ++end;
    ends.push_back(end);
  }
  return ends;
}

}  // namespace

Status UpdatePath::Close() {
  if (!s_.log_ || !s_.tree_) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(s_.log_->Commit());
  return Checkpoint();
}

// ---- updates ------------------------------------------------------------------

Status UpdatePath::Write(uint64_t first, std::span<const Value> values, int64_t time) {
  MOMENTA_RETURN_IF_ERROR(s_.CheckWritable());
  MOMENTA_RETURN_IF_ERROR(s_.array_->CheckRange(first, values.size()));
  for (const Value& v : values) MOMENTA_RETURN_IF_ERROR(CheckFits(*s_.array_, v));
  // A consecutive range reserves its blocks in one call; the file system
  // undoes a reservation that does not fit, so a full disk changes nothing.
  MOMENTA_RETURN_IF_ERROR(MarkDirty());  // fallocate may move the array's mtime
  if (Status s = s_.array_->io().Allocate(s_.array_->ByteOffset(first), values.size() * s_.array_->itemsize()); !s.ok())
    return s.WithNote("nothing was applied");
  std::vector<IndexedValue> updates(values.size());
  for (size_t k = 0; k < values.size(); ++k) updates[k] = {first + k, values[k], time};
  return ApplyUpdates(updates, /*prefault=*/false);
}

Status UpdatePath::Apply(std::span<const IndexedValue> updates, size_t* applied) {
  return ApplyUpdates(updates, /*prefault=*/true, applied);
}

Status UpdatePath::ApplyUpdates(std::span<const IndexedValue> updates, bool prefault, size_t* applied) {
  size_t unused = 0;
  if (!applied) applied = &unused;
  *applied = 0;
  MOMENTA_RETURN_IF_ERROR(s_.CheckWritable());
  for (const IndexedValue& u : updates) {  // check
    MOMENTA_RETURN_IF_ERROR(s_.array_->CheckRange(u.index, 1));
    MOMENTA_RETURN_IF_ERROR(CheckFits(*s_.array_, u.value));
    MOMENTA_RETURN_IF_ERROR(s_.buffer_->CheckValue(*s_.array_, u.index, u.value));
  }
  if (updates.empty()) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(s_.OpenStoreOnce());
  MOMENTA_RETURN_IF_ERROR(MarkDirty());
  const std::vector<size_t> chunk_ends = ChunkEnds(updates);
  // All or nothing: everything the updates need is reserved before the first
  // change, so a full disk fails here and leaves array, buffer and log as
  // they were.
  if (Status s = ReserveForUpdates(updates, chunk_ends.size(), prefault); !s.ok())
    return s.WithNote("nothing was applied: none of the " + std::to_string(updates.size()) +
                      " updates is in the array or the log");
  const uint64_t first_sequence = s_.log_->next_sequence();
  // Reads at depth: before a chunk is applied, the uncached pages of the
  // updates up to kFetchWindow past its end are asked for together
  // (FetchForStores), so its faults find their pages read or in flight and
  // the device always has the next window's reads queued. A page read costs
  // one 4 KiB read; the window bounds what is read ahead of its stores.
  size_t fetched = 0;  // updates [0, fetched) had their pages asked for
  std::vector<uint64_t> indices;
  auto fetch_until = [&](size_t until) {
    while (fetched < until) {
      const size_t end = std::min(until, fetched + kFetchWindow);
      indices.clear();
      for (size_t k = fetched; k < end; ++k) indices.push_back(updates[k].index);
      s_.store_->FetchForStores(indices);
      fetched = end;
    }
  };
  size_t begin = 0;
  for (const size_t end : chunk_ends) {
    *applied = begin;
    MOMENTA_RETURN_IF_ERROR(CheckCancel(s_.array_->path()));  // between chunks: consistent
    fetch_until(std::min(updates.size(), end + kFetchWindow));
    size_t done = 0;
    if (Status s = ApplyChunk(updates.subspan(begin, end - begin), &done); !s.ok()) {
      // Past the reservations only an I/O error gets here: say what stays.
      const uint64_t logged_end = s_.log_->next_sequence();
      if (logged_end == first_sequence) return s.WithNote("nothing was applied");
      return s.WithNote("the first " + std::to_string(begin) + " of " + std::to_string(updates.size()) +
                        " updates were applied; the log holds sequences " + std::to_string(first_sequence) + ".." +
                        std::to_string(logged_end - 1) + " of them, which recovery completes");
    }
    begin = end;
  }
  *applied = updates.size();
  return Status::OK();
}

Status UpdatePath::ReserveForUpdates(std::span<const IndexedValue> updates, size_t chunks, bool prefault) {
  // 1. The log: frames and sequence numbers for every update (an unchanged
  //    value takes less than its share).
  MOMENTA_RETURN_IF_ERROR(s_.log_->Reserve(updates.size(), chunks));
  // 2. The buffer: the page of every node the updates touch (the tree file is
  //    sparse: a node's page may be a hole), for a run of elements at a time:
  //    the nodes over elements [first, last] are a run of nodes per level.
  //    Their pages are asked for together as well (FetchNodes), each once.
  const TreeLayout& layout = s_.tree_->layout();
  IndexSet node_pages;  // tree file pages asked for
  auto reserve_nodes = [&](uint64_t first, uint64_t last) -> Status {
    for (int level = 1; level <= layout.levels(); ++level) {
      const uint64_t j0 = layout.NodeOf(level, first), j1 = layout.NodeOf(level, last);
      MOMENTA_RETURN_IF_ERROR(s_.tree_->AllocateNodes(level, j0, j1 - j0 + 1));
      s_.tree_->FetchNodes(level, j0, j1 - j0 + 1, &node_pages);
    }
    return Status::OK();
  };
  // 3. The array: the blocks under every element. A consecutive range
  //    (Write) was allocated whole by its caller; it overwrites the blocks
  //    inside it whole, only its end blocks may be partial.
  if (!prefault) {  // Write: updates[k].index = updates[0].index + k
    MOMENTA_RETURN_IF_ERROR(reserve_nodes(updates.front().index, updates.back().index));
    s_.store_->PrepareForStore(updates.front().index);
    s_.store_->PrepareForStore(updates.back().index);
    return Status::OK();
  }
  //    Scattered updates: once per distinct page, the nodes over its
  //    elements are reserved and, when the page lies in a hole of the file,
  //    its block allocated (fallocate: a full disk fails here, before any
  //    change). Nothing is stored and no page dirtied here: a page dirtied
  //    now and stored into much later (a long input) would be written back
  //    twice. On a file system that overwrites in place (ext4, xfs) a store
  //    into an allocated block needs no space; on a copy-on-write one a full
  //    disk may still fail a store later, which the guarded store reports
  //    (the update is logged and recovery completes it).
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const IndexedValue& u : updates) lo = std::min(lo, u.index), hi = std::max(hi, u.index);
  // Over whole pages: in_data asks about each touched page, from its first
  // byte (an extent starting at the first element's byte would leave that
  // page "not in data", and a fallocate per batch: a journalled inode
  // change per single update).
  constexpr uint64_t kPage = ScatteredStores::kPageBytes;
  const uint64_t data_end = s_.array_->ByteOffset(s_.array_->length());
  const uint64_t pages_end = (s_.array_->ByteOffset(hi + 1) + kPage - 1) / kPage * kPage;
  auto extents = s_.array_->io().DataExtents(s_.array_->ByteOffset(lo) / kPage * kPage, std::min(data_end, pages_end));
  if (!extents.ok()) return extents.status();
  auto in_data = [&](uint64_t begin, uint64_t end) {  // [begin, end) inside one data extent
    auto it = std::upper_bound(extents->begin(), extents->end(), begin,
                               [](uint64_t b, const ByteRange& r) { return b < r.begin; });
    return it != extents->begin() && std::prev(it)->end >= end;
  };
  IndexSet ready;  // pages reserved (file offset / page size)
  for (const IndexedValue& u : updates) {
    const uint64_t page = s_.array_->ByteOffset(u.index) / ScatteredStores::kPageBytes;
    if (!ready.insert(page)) continue;
    const ElementRun run = s_.store_->PageElements(u.index);
    MOMENTA_RETURN_IF_ERROR(reserve_nodes(run.first, run.last));
    const uint64_t begin = page * ScatteredStores::kPageBytes;
    const uint64_t end = std::min(data_end, begin + ScatteredStores::kPageBytes);
    if (!in_data(begin, end)) MOMENTA_RETURN_IF_ERROR(s_.array_->io().Allocate(begin, end - begin));
  }
  return Status::OK();
}

Status UpdatePath::ReadChanges(std::span<const IndexedValue> chunk) {
  const DType t = s_.array_->dtype();
  const size_t item = s_.array_->itemsize();
  records_.clear();
  for (size_t k = 0; k < chunk.size(); ++k) {
    const IndexedValue& u = chunk[k];
    if (k + kPrefetchAhead < chunk.size()) s_.store_->PrefetchElement(chunk[k + kPrefetchAhead].index);
    char old_bytes[8] = {}, new_bytes[8] = {};
    MOMENTA_RETURN_IF_ERROR(s_.store_->Load(u.index, old_bytes));
    EncodeValue(t, u.value, new_bytes);
    if (std::memcmp(old_bytes, new_bytes, item) == 0) continue;  // no change, no record
    // Its page was made writable by the reservation; a store may still fault
    // if the file was truncated since: found here, before anything is logged.
    MOMENTA_RETURN_IF_ERROR(s_.store_->Store(u.index, old_bytes));
    LogRecord r;
    r.time = u.time;
    r.index = u.index;
    std::memcpy(&r.old_raw, old_bytes, item);
    std::memcpy(&r.new_raw, new_bytes, item);
    records_.push_back(r);
  }
  return Status::OK();
}

Status UpdatePath::ApplyChunk(std::span<const IndexedValue> chunk, size_t* done) {
  // 1. Check: the old values, and a record of each change (up to a failed access).
  const Status stop = ReadChanges(chunk);
  if (records_.empty()) return stop;
  // 2. Log: once Append returns, the updates survive a crash (per policy).
  auto first = s_.log_->Append(records_);
  if (!first.ok()) return first.status();
  MOMENTA_RETURN_IF_ERROR(BeginChunk());
  TreeFileHeader& h = s_.tree_->header();
  h.chunk_first_sequence = *first;
  // A buffer that does not gather chunks keeps the per-record path (its
  // recovery replays from log_sequence + 1 on, which needs log_sequence to
  // move per record).
  if (s_.buffer_->GathersChunks() && GatherChanges()) {
    MOMENTA_RETURN_IF_ERROR(StoreThenGather(*first));
    *done = records_.size();
    MOMENTA_RETURN_IF_ERROR(EndChunk());
    return stop;
  }
  // 3. Store, then tree, a record at a time inside the seqlock: log_sequence
  //    names the last record both the array and the tree reflect.
  const TreeLayout& layout = s_.tree_->layout();
  for (size_t k = 0; k < records_.size(); ++k) {
    const LogRecord& r = records_[k];
    if (k + kPrefetchAhead < records_.size()) {  // the leaf and its parent, a few records ahead
      const uint64_t ahead = records_[k + kPrefetchAhead].index;
      for (int level = 1; level <= std::min(2, layout.levels()); ++level)
        s_.tree_->PrefetchNode(level, layout.NodeOf(level, ahead));
    }
    if (Status s = s_.store_->Store(r.index, RawBytes(r.new_raw)); !s.ok()) {
      (void)EndChunk();  // logged but not applied: recovery will apply it from the log
      return s;
    }
    MOMENTA_RETURN_IF_ERROR(
        s_.maintenance_->Apply(*s_.tree_, r.index, RawBytes(r.old_raw), RawBytes(r.new_raw), /*reserved=*/true));
    MOMENTA_RETURN_IF_ERROR(s_.buffer_->Update(s_.array_->dtype(), r));
    std::atomic_ref<uint64_t>(h.log_sequence).store(*first + k, std::memory_order_release);
    h.updates_since_build++;
  }
  *done = records_.size();
  MOMENTA_RETURN_IF_ERROR(EndChunk());
  return stop;
}

bool UpdatePath::GatherChanges() {
  changes_.clear();
  for (const LogRecord& r : records_) {
    const CellChange c = s_.maintenance_->ChangeOf(r.index, RawBytes(r.old_raw), RawBytes(r.new_raw));
    if (!std::isfinite(c.old_value) || !std::isfinite(c.new_value)) return false;  // counted apart: one at a time
    changes_.push_back(c);
  }
  return true;
}

// 3'. Every record's store first, then log_sequence moved to the chunk's
//     last record, then the tree updated once per node for the whole chunk
//     (TreeMaintenance::ApplyGathered). A writer killed on the way leaves
//     the state updating, and recovery is exact at each point:
//     - during the stores: log_sequence is the last chunk's end, so every
//       record of this chunk is replayed, the first one's nodes recomputed
//       from data (the tree has seen none of them);
//     - once log_sequence moved: the nodes of records [chunk_first_sequence,
//       log_sequence] are recomputed from data (the array holds them all).
//     A store that fails (an I/O error) ends the chunk at the records
//     stored before it, exactly as the per-record path does.
Status UpdatePath::StoreThenGather(uint64_t first) {
  TreeFileHeader& h = s_.tree_->header();
  size_t stored = 0;
  Status failed;
  for (; stored < records_.size(); ++stored) {
    const LogRecord& r = records_[stored];
    if (Status s = s_.store_->Store(r.index, RawBytes(r.new_raw)); !s.ok()) {
      failed = s;
      break;
    }
  }
  if (stored > 0) {
    std::atomic_ref<uint64_t>(h.log_sequence).store(first + stored - 1, std::memory_order_release);
    h.updates_since_build += stored;
    Status s = s_.maintenance_->ApplyGathered(*s_.tree_, std::span<const CellChange>(changes_).first(stored));
    if (!s.ok() && failed.ok()) failed = s;
  }
  if (!failed.ok()) (void)EndChunk();  // logged but not applied: recovery applies the rest from the log
  return failed;
}

Status UpdatePath::BeginChunk() {
  TreeFileHeader& h = s_.tree_->header();
  // A reader that kept losing the race asked for a pause: give it one.
  const int64_t wait_until = ReaderWait(h).load(std::memory_order_acquire);
  const int64_t now = MonotonicNs();
  if (wait_until > now && wait_until - now <= kReaderWaitNs)
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait_until - now));
  MOMENTA_RETURN_IF_ERROR(MarkDirty());
  s_.maintenance_->Begin(*s_.tree_);
  Epoch(h).fetch_add(1, std::memory_order_acq_rel);  // odd: changing
  return Status::OK();
}

Status UpdatePath::MarkDirty() {
  if (s_.dirty_) return Status::OK();
  // The first change since the last checkpoint: the header must say so (on
  // disk, unless kNone) before the log grows or any page of the array or the
  // nodes changes — even a store of unchanged bytes moves the array's mtime —
  // or recovery would take the buffer for clean and the array for changed
  // behind its back.
  s_.tree_->header().state = kTreeUpdating;
  if (s_.options_.sync != LogSync::kNone) MOMENTA_RETURN_IF_ERROR(s_.tree_->FlushHeader());
  MOMENTA_RETURN_IF_ERROR(s_.buffer_->MarkUpdating(s_.options_.sync != LogSync::kNone));
  s_.dirty_ = true;
  return Status::OK();
}

Status UpdatePath::EndChunk() {
  Status s = s_.maintenance_->Flush(*s_.tree_, s_.store_.get());
  s_.buffer_->Seal();
  TreeFileHeader& h = s_.tree_->header();
  auto identity = IdentityOf(s_.array_->path());
  if (identity.ok()) h.array = *identity;
  Epoch(h).fetch_add(1, std::memory_order_acq_rel);  // even: consistent
  if (!s.ok()) return s;
  return identity.status();
}

Status UpdatePath::Commit() {
  if (!s_.log_) return Status::OK();
  MOMENTA_RETURN_IF_ERROR(s_.log_->Commit());
  // The log alone makes updates durable; checkpoints only bound how much of
  // it recovery after a machine crash must replay.
  const TreeFileHeader& h = s_.tree_->header();
  if (h.log_sequence - h.checkpoint_sequence >= kCheckpointEveryRecords) return Checkpoint();
  return Status::OK();
}

Status UpdatePath::Checkpoint() {
  if (!s_.dirty_) return Status::OK();
  TreeFileHeader& h = s_.tree_->header();
  if (s_.options_.sync != LogSync::kNone) {
    // Checkpoint: array and nodes on disk, then a header that says so.
    MOMENTA_RETURN_IF_ERROR(s_.array_->Sync());
    MOMENTA_RETURN_IF_ERROR(s_.tree_->Flush());
  }
  auto identity = IdentityOf(s_.array_->path());
  if (!identity.ok()) return identity.status();
  h.array = *identity;
  h.checkpoint_sequence = h.log_sequence;
  // The buffer's own part clean first: a crash before the tree's clean
  // header leaves one that is clean as of the same state (recovery keeps it).
  MOMENTA_RETURN_IF_ERROR(s_.buffer_->MarkClean(h.log_sequence, h.array, s_.options_.sync != LogSync::kNone));
  s_.tree_->MarkClean();
  if (s_.options_.sync != LogSync::kNone) MOMENTA_RETURN_IF_ERROR(s_.tree_->FlushHeader());
  s_.dirty_ = false;
  return PruneLog();
}

Status UpdatePath::PruneLog() {
  if (!s_.log_ || s_.options_.retain_ms < 0) return Status::OK();
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  return DropExpiredLogSegments(*s_.log_, s_.tree_->header().checkpoint_sequence, now_ms - s_.options_.retain_ms);
}

}  // namespace momenta
