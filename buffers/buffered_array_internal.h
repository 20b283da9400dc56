// BufferedArray's parts, behind its pimpl: the facade's header names no
// storage internals (the array's store, the log writer, the lock, the tree).
// Shared by buffered_array.cc and buffer_*.cc; not installed.
//
// The facade is split by role, each a class of one job, over one shared
// BufferState:
//   - BufferOpening (buffer_open.cc, buffer_recover.cc): opening as a writer
//     or a reader, the buffer's condition, recovery (the log's replay) and
//     rebuilds;
//   - ConsistentReads (buffer_query.cc): queries, each consistent with one
//     log sequence, from any number of reader threads;
//   - UpdatePath (buffer_update.cc): a writer's updates, commits and
//     checkpoints;
//   - VerifyBuffer (buffer_verify.cc): every node against a fresh build.
// BufferedArray's public methods forward to the role that does them; their
// contracts are in buffered_array.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "buffers/algebra/node_delta.h"
#include "buffers/buffered_array.h"
#include "buffers/ola/ola_file.h"
#include "buffers/tree/moment_buffer.h"
#include "buffers/tree/moment_tree.h"
#include "buffers/tree/range_query.h"
#include "buffers/tree/tree_build.h"
#include "storage/array/array_file.h"
#include "storage/array/writer_lock.h"
#include "storage/log/log_writer.h"

namespace momenta {

class ArrayStore;       // storage/array/array_store.h
class TreeMaintenance;  // buffers/tree/tree_maintenance.h

// What every role shares (buffer_state.cc): the array, its tree and what the
// buffer's kind keeps beside it, a writer's lock, log and store, and the
// mutex readers' threads hold around them.
struct BufferState {
  BufferState(std::unique_ptr<ArrayFile> array, std::string sidecar, const BufferedArrayOptions& options);
  BufferState(const BufferState&) = delete;
  BufferState& operator=(const BufferState&) = delete;
  ~BufferState();

  uint64_t applied_sequence() {
    std::shared_lock<std::shared_mutex> shared(tree_mutex_);
    return std::atomic_ref<uint64_t>(tree_->header().log_sequence).load(std::memory_order_acquire);
  }
  std::string OlaPath() const { return sidecar_ + "/ola"; }
  std::string LogDir() const { return sidecar_ + "/log"; }
  std::string LockPath() const { return sidecar_ + "/writer.lock"; }
  // Whether a writer's log is open (this is a writer, or a reader recovering).
  bool writer() const { return log_ != nullptr; }

  // The moment buffer the tree's header names (buffer_kind.h), opened to
  // match the tree into buffer_: "" when it is usable, else why it must be
  // rebuilt (buffer_ then answers from the tree alone). `require_clean`: it
  // must be clean as of the tree's log sequence and identity (no live writer
  // keeps it).
  Result<std::string> OpenBuffer(bool require_clean);
  // Opens store_ (the array mapped writable) unless it is open.
  [[nodiscard]] Status OpenStoreOnce();
  [[nodiscard]] Status CheckWritable() const;
  // A Corruption naming the tree file (or a file of the buffer beside it):
  // damage found while answering.
  bool IsTreeDamage(const Status& s) const;
  // Notices of work done after Open (TakeNotices).
  void AddLateNotices(std::vector<std::string> notices);
  std::vector<std::string> TakeNotices();

  std::unique_ptr<ArrayFile> array_;
  std::unique_ptr<MomentTree> tree_;
  std::unique_ptr<MomentBuffer> buffer_;  // what answers beside tree_, of the kind its header names; never null
  const std::string sidecar_;
  const std::string tree_path_;
  bool tree_writable_ = false;  // tree_ is mapped writable (readers: when they may)
  OpenReport open_report_;
  std::vector<std::string> late_notices_;  // for TakeNotices; guarded by notices_mutex_
  std::mutex notices_mutex_;
  std::string forced_rebuild_;  // damage a query found: Recover rebuilds for it
  const BufferedArrayOptions options_;
  std::unique_ptr<WriterLock> lock_;                    // writers: the array's writer lock
  std::unique_ptr<LogWriter> log_;                      // writers: the update log
  std::unique_ptr<ArrayStore> store_;                   // writers (and a reader recovering): the array, writable
  const std::unique_ptr<TreeMaintenance> maintenance_;  // keeps tree_ equal to the array as updates land
  bool dirty_ = false;                                  // changes since the last checkpoint
  // Shared by every query; exclusive to whatever replaces or rewrites tree_
  // (a reopen, a recovery, a rebuild for damage).
  std::shared_mutex tree_mutex_;
};

// A writer's updates (buffer_update.cc): check -> log -> store -> tree, and
// the commits and checkpoints that make them durable.
class UpdatePath {
 public:
  explicit UpdatePath(BufferState& s) : s_(s) {}

  [[nodiscard]] Status Write(uint64_t first, std::span<const Value> values, int64_t time);
  [[nodiscard]] Status Apply(std::span<const IndexedValue> updates, size_t* applied);
  [[nodiscard]] Status Commit();
  [[nodiscard]] Status Close();
  // Array and nodes to disk (unless kNone), then a clean header naming the
  // log sequence they reflect. No-op when nothing changed since the last one.
  [[nodiscard]] Status Checkpoint();

 private:
  // Apply, with the pages made writable first (prefault) or already reserved.
  [[nodiscard]] Status ApplyUpdates(std::span<const IndexedValue> updates, bool prefault, size_t* applied = nullptr);
  // Everything `updates` (in `chunks` chunks) will need: log frames and
  // sequences, node pages, and the array's blocks (prefault) or their end
  // pages (a consecutive range whose blocks were allocated).
  [[nodiscard]] Status ReserveForUpdates(std::span<const IndexedValue> updates, size_t chunks, bool prefault);
  // One chunk of at most kChunk updates with distinct indices: log, store, tree.
  [[nodiscard]] Status ApplyChunk(std::span<const IndexedValue> chunk, size_t* done);
  // Fills records_ with the chunk's changes (old and new bytes; unchanged
  // values are dropped), each element's page tested writable. A failed access
  // stops it: records_ then holds the changes before it.
  [[nodiscard]] Status ReadChanges(std::span<const IndexedValue> chunk);
  [[nodiscard]] Status MarkDirty();
  // Deletes log segments past retention (options_.retain_ms) that the
  // checkpoint no longer needs.
  [[nodiscard]] Status PruneLog();
  // Fills changes_ from records_; false when a value is not finite (the
  // chunk is then applied a record at a time).
  bool GatherChanges();
  // Stores records_, moves log_sequence to their last, then updates the tree
  // once per node (step 3').
  [[nodiscard]] Status StoreThenGather(uint64_t first_sequence);
  // The seqlock around a chunk: odd while its stores and node changes run.
  [[nodiscard]] Status BeginChunk();
  [[nodiscard]] Status EndChunk();

  BufferState& s_;
  std::vector<LogRecord> records_;   // the chunk being applied
  std::vector<CellChange> changes_;  // records_ as the tree sees them (GatherChanges)
};

// Opening and recovery (buffer_open.cc, buffer_recover.cc).
class BufferOpening {
 public:
  BufferOpening(BufferState& s, UpdatePath& updates) : s_(s), updates_(updates) {}

  [[nodiscard]] Status OpenAsWriter(std::vector<std::string>* notices);
  [[nodiscard]] Status OpenAsReader(std::vector<std::string>* notices);
  // Reads the buffer's condition; leaves tree_ open when it is usable.
  Result<BufferCondition> Classify();
  // A reader that found `why` does the writer's recovery for it (taking the
  // lock for that moment), or says how to when it may not write.
  [[nodiscard]] Status RecoverAsWriter(const BufferCondition& why, std::vector<std::string>* notices);
  // BufferedArray::Rebuild: the lock taken for it unless this is a writer.
  Result<BuildStats> Rebuild(const TreeOptions& options, const BuildProgress& progress);
  // Builds a fresh tree (and what the kind keeps beside it) and renames it
  // over the old one; readers that have the old one see it retired.
  [[nodiscard]] Status RebuildInPlace(const TreeOptions& options, const BuildProgress& progress, BuildStats* stats);

 private:
  // The writer's steps before Recover: the sidecar's identity claimed (a
  // foreign one set aside), a dead process's leftovers removed, the log opened.
  // `cut_log`: the log's recovery may cut a torn tail (false for the
  // recovery a reader runs: it changes no byte of the log's records).
  [[nodiscard]] Status PrepareWriter(std::vector<std::string>* notices, bool cut_log = true);
  // Why the sidecar does not belong to this array ("" when it does).
  Result<std::string> ForeignSidecarReason();
  void RemoveLeftovers(std::vector<std::string>* notices);
  // Creates the sidecar folder if needed and takes its writer lock.
  [[nodiscard]] Status MakeSidecarAndLock();
  [[nodiscard]] Status Recover(std::vector<std::string>* notices);
  // Recover's first step: what the buffer on disk allows (a replay into the
  // nodes, into the array only, a rebuild); leaves tree_ open writable when
  // it opens.
  struct RecoveryPlan;
  Result<RecoveryPlan> PlanRecovery(std::vector<std::string>* notices);
  // Recover's rebuild in place, reported as the open's full pass.
  [[nodiscard]] Status FullPass(const TreeOptions& build, const std::string& reason);
  // Replays log records after `after` into the array (and the nodes when
  // tree_too); records from `refresh_from` up to `after` were applied to the
  // nodes already but their chunk's recomputations may be owed: redone.
  [[nodiscard]] Status ReplayIntoArrayAndTree(uint64_t after, bool tree_too, uint64_t refresh_from, uint64_t* replayed);
  // One record after the replay's start into the array and, when tree_too,
  // the nodes and the buffer beside them; `partial`: the record a writer was
  // killed inside, whose nodes and buffer values are recomputed from the array.
  [[nodiscard]] Status ReplayRecord(const LogRecord& r, bool tree_too, bool partial);
  // Reads the array's cells as doubles through store_ (recovery's recomputed buffer values).
  OlaBuffer::CellReader ArrayCells();

  BufferState& s_;
  UpdatePath& updates_;
};

// Queries (buffer_query.cc): one range or a batch, each answer consistent
// with one log sequence, from any number of threads on a reader.
class ConsistentReads {
 public:
  ConsistentReads(BufferState& s, BufferOpening& opening) : s_(s), opening_(opening) {}

  Result<RangeSummary> Summarize(uint64_t p, uint64_t q, bool need_extremes, QueryCost* cost, uint64_t* as_of);
  Result<IndexMoments> SummarizeIndex(uint64_t p, uint64_t q, uint64_t* as_of, QueryCost* cost);
  [[nodiscard]] Status SummarizeIndexBatch(std::span<const IndexRange> ranges, std::vector<IndexMoments>* out,
                                           std::vector<QueryCost>* costs);
  [[nodiscard]] Status SummarizeBatch(std::span<const IndexRange> ranges, bool need_extremes,
                                      std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                      std::vector<uint64_t>* as_of, QueryCost* read);

 private:
  // OutOfRange naming the first range outside the array.
  [[nodiscard]] Status CheckRanges(std::span<const IndexRange> ranges) const;
  // The summaries of `ranges` (one batch of reads), consistent with the one
  // log sequence *as_of receives; readers retry, recover and rebuild as
  // buffered_array.h says. read (optional) is added what the answering
  // attempt asked of the devices (SummarizeRanges' `read`).
  [[nodiscard]] Status SummarizeConsistent(std::span<const IndexRange> ranges, bool need_extremes,
                                           std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                           uint64_t* as_of, QueryCost* read = nullptr);
  // `read` (the tree's nodes and the array's cells, or the buffer's own
  // and cells) until it ran with no writer's change beside it; *as_of
  // receives the log sequence it saw. Damage it reports (a Corruption naming
  // a file of the buffer, in a consistent read) rebuilds the buffer once.
  [[nodiscard]] Status ReadConsistent(const std::function<Status(const QueryIo&)>& read, uint64_t* as_of);
  // The writer's ReadConsistent: nothing runs beside it in this object.
  [[nodiscard]] Status ReadAsWriter(const std::function<Status(const QueryIo&)>& read, uint64_t* as_of);
  // A reader's recovery or rebuild that a query found it needs.
  // REQUIRES: tree_mutex_ held exclusively.
  [[nodiscard]] Status RecoverForQuery(const BufferCondition& why);
  // A tree retired by a rebuild is reopened from its path (with what its
  // kind keeps beside it). REQUIRES: tree_mutex_ held exclusively.
  [[nodiscard]] Status ReopenTreeIfRetired();
  // Drops the idle backends of query threads (the tree file was replaced).
  void ResetIoPool();

  // A batch answers this many ranges per consistent read (bounds the memory
  // of one batch, and the work a writer's chunk can make a reader redo).
  static constexpr size_t kBatchChunk = 256;
  // A query thread's own backends for the array and the tree file.
  struct QueryBackends {
    std::unique_ptr<IoBackend> array;
    std::unique_ptr<IoBackend> tree;
    ReadArena arena;  // where this thread's batches land
  };
  class IoLease;

  BufferState& s_;
  BufferOpening& opening_;
  std::atomic<bool> primary_io_busy_{false};  // a query is reading through array_->io() and tree_->io()
  ReadArena primary_arena_;                   // the batches of that query (and of a writer's)
  std::mutex io_pool_mutex_;
  std::vector<std::unique_ptr<QueryBackends>> io_pool_;  // idle; guarded by io_pool_mutex_
};

// Recomputes every node from the array into a scratch tree and compares
// (buffer_verify.cc).
Result<VerifyReport> VerifyBuffer(BufferState& s, const BuildProgress& progress);

struct BufferedArray::Impl {
  Impl(std::unique_ptr<ArrayFile> array, std::string sidecar, const BufferedArrayOptions& options)
      : state(std::move(array), std::move(sidecar), options) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // A writer closes (best effort) and unlocks.
  ~Impl() { (void)updates.Close(); }

  BufferState state;
  UpdatePath updates{state};
  BufferOpening opening{state, updates};
  ConsistentReads reads{state, opening};
};

}  // namespace momenta
