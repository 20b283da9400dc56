// BufferedArray: the facade a program (and the CLI) uses — an array file, its
// moment buffer and its update log, kept consistent. It delegates: ArrayFile
// holds the elements (its ArrayStore takes a writer's stores), MomentTree the
// buffer, BuildTree fills it, TreeMaintenance keeps it current under updates,
// SummarizeRange answers, LogWriter records every change; what the buffer's
// kind keeps beside the tree (the Ola buffer) sits behind one interface
// (buffers/tree/moment_buffer.h). It answers statistics itself (Stat,
// StatBatch), choosing what to read: front ends name statistics, never a kind.
//
// Everything momenta keeps about the array lives in its sidecar folder
// (storage/array/sidecar.h: beside the array, under MOMENTA_SIDECAR_DIR, or where
// options.sidecar says), which records the identity of the array it belongs
// to; a sidecar of another array is set aside, never misread.
//
// Writers (IoOptions::writable) hold the array's writer lock; a second writer
// gets "locked by another writer (pid N)". Every update goes: log append
// (durable per LogSync) -> array store -> the nodes over it (once per node
// per chunk of updates), and the buffer header's log_sequence says which
// records both reflect. Commit() makes the
// changes durable per the sync policy and checkpoints the buffer.
//
// Recovery (by a writer's Open, and by a reader's when it finds work only a
// writer may do — then the reader takes the lock for that moment and says so):
//  - the log's torn tail is cut and reported;
//  - after a crash of the process (same kernel boot), the mapped buffer and
//    array pages survived: the records after log_sequence are replayed into
//    both, exactly (records carry old and new values);
//  - after a crash of the machine, a buffer whose durable header says clean
//    is exact as of its checkpoint and the records after it are replayed; any
//    other buffer is rebuilt after the records are replayed into the array;
//  - a buffer missing, damaged, made for other parameters, or describing an
//    array changed behind momenta's back is rebuilt; each event is a notice,
//    and every pass over the whole array says what it reads and why.
//
// Readers take no lock and write nothing when the buffer is current or a
// live writer keeps it so: they need only read access to the array and the
// sidecar. A reader finds a writer alive by testing its lock (WriterIsAlive),
// never by taking it. Readers in other processes may query while a writer
// runs. Guarantee: a query's answer equals the exact answer for the array
// after some log sequence s with s_start <= s <= s_end, the log sequences
// applied when the query began and ended (a seqlock on the buffer header; a
// reader that keeps losing the race asks writers to pause briefly at their
// next chunk). A reader never waits on a writer that is not alive: when the
// seqlock stays taken and the lock's holder is gone, the reader recovers (or,
// without write access, says how to) and answers within a bounded time.
//
// Threads: a reader (not io.writable) may be queried (Summarize,
// SummarizeBatch) from several threads at once; each thread reads through
// backends of its own, opened the first time it needs them. Everything else,
// and every method of a writer, is for one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "buffers/algebra/range_summary.h"
#include "buffers/algebra/statistics.h"
#include "buffers/range_answers.h"
#include "buffers/tree/buffer_description.h"
#include "buffers/tree/tree_options.h"
#include "storage/io/io_backend.h"
#include "storage/log/log_format.h"
#include "storage/log/log_sync.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

class ArrayFile;  // storage/array/array_file.h

struct BufferedArrayOptions {
  IoOptions io;                                     // io.writable: a writer (lock, log, updates)
  TreeOptions tree;                                 // used whenever the buffer is (re)built
  BuildProgress progress;                           // called during builds
  LogSync sync = LogSync::kBatch;                   // the update log's sync policy (writers)
  uint64_t log_segment_bytes = uint64_t{64} << 20;  // log rotation size
  // Log retention, ms: at each checkpoint, whole segments older than this
  // (their records all before now − retain_ms, judged by the next segment's
  // first record) and already checkpointed are deleted. < 0: keep everything.
  int64_t retain_ms = -1;
  // The sidecar folder itself (`--sidecar DIR`); empty: SidecarPath's rules.
  std::string sidecar;
  // false: a buffer that needs a full rebuild is not rebuilt by Open — the
  // caller rebuilds right after (momenta build), so the data is read once.
  bool rebuild_on_open = true;
  // true: the array file was just made (create, import): whatever sidecar is
  // already at its place belonged to the file it replaced, and is set aside.
  bool fresh_array = false;
  // The caller's words for two remedies Open's errors advise, which only the
  // caller knows how its user applies (the CLI says "run 'momenta build
  // PATH'" and "--sidecar DIR"): "<build_advice> as a user who may write
  // there", "keep the buffer elsewhere with <sidecar_advice>".
  std::string build_advice = "build the buffer";
  std::string sidecar_advice = "BufferedArrayOptions::sidecar";
};

// What Open did besides opening: the work a caller may want to report apart
// from its own (a query's time is not the rebuild's).
struct OpenReport {
  bool full_pass = false;        // Open built or rebuilt the buffer (one pass over the array)
  std::string full_pass_reason;  // why
  double full_pass_seconds = 0;
  uint64_t full_pass_bytes_read = 0;
  uint64_t replayed = 0;   // log records replayed into the array (and the buffer)
  bool recovered = false;  // a reader did a writer's recovery (see above)
};

// The state of an array's buffer as a reader finds it, and so what the next
// command will do (Inspect; momenta info).
struct BufferCondition {
  enum class Kind {
    kCurrent,     // answers come from it as it is
    kLiveWriter,  // a writer is changing it; readers synchronize with it
    kRecover,     // a writer died mid-update: the next open replays the log
    kRebuild,     // the next open rebuilds it (one pass over the array)
    kMissing,     // the next open builds it (one pass over the array)
    kForeign,     // the sidecar belongs to another array: set aside, then built
  };
  Kind kind = Kind::kCurrent;
  std::string why;  // one phrase, empty for kCurrent
  bool NeedsWriter() const { return kind != Kind::kCurrent && kind != Kind::kLiveWriter; }
  bool FullPass() const { return kind == Kind::kRebuild || kind == Kind::kMissing || kind == Kind::kForeign; }
};

// What `momenta info` says of an array's buffer (Describe).
struct BufferInfo {
  BufferCondition condition;
  // The buffer as it is, when the condition leaves it in place (current, a
  // live writer, recovery due) and its tree opens; else empty.
  std::optional<BufferDescription> buffer;
};

// One update: a[index] = value (checked to fit the dtype) at `time` (ms;
// kLogTimeNow: the wall clock).
struct IndexedValue {
  uint64_t index = 0;
  Value value;
  int64_t time = kLogTimeNow;
};

// What Verify found.
struct VerifyReport {
  uint64_t nodes_checked = 0;
  uint64_t mismatches = 0;
  std::vector<std::string> examples;  // the first few mismatches, one line each
};

class BufferedArray {
 public:
  BufferedArray(const BufferedArray&) = delete;
  BufferedArray& operator=(const BufferedArray&) = delete;
  // A writer closes (best effort; call Close() to see errors) and unlocks.
  ~BufferedArray();

  // Opens `path` with its buffer "<path>.momenta/tree" and, for writers, its
  // log "<path>.momenta/log/", recovering as described above; each recovery
  // or rebuild appends a one-line notice.
  static Result<std::unique_ptr<BufferedArray>> Open(const std::string& path, const BufferedArrayOptions& options,
                                                     std::vector<std::string>* notices = nullptr);

  // The condition of `path`'s buffer, read as it is: takes no lock, writes
  // nothing, builds nothing.
  static Result<BufferCondition> Inspect(const std::string& path, const BufferedArrayOptions& options);
  // Inspect's condition and, where the buffer stays in place, what it is
  // (buffers/tree/buffer_description.h): read as it is, like Inspect.
  static Result<BufferInfo> Describe(const std::string& path, const BufferedArrayOptions& options);

  // The array file (storage/array/array_file.h).
  ArrayFile& array();
  // The highest index-moment order a summary carries: the Ola buffer's N − 1
  // for kind ola (its tree has order 0), else the tree's J.
  int index_order() const;
  // The tree's own order J (0 for kind ola): the order of its nodes' form
  // (NodeCodec), in which summaries travel as rows.
  int tree_order() const;
  // The elements one leaf of the tree covers (edges on its multiples cut no leaf).
  uint64_t leaf_span() const;
  // The tree's levels, leaves included.
  int levels() const;
  // The buffer's kind as the CLI names it: "hbb" (the tree alone) or "ola"
  // (an Ola buffer beside the tree), as its header records.
  const char* buffer_kind() const;
  const std::string& sidecar() const;
  const std::string& tree_path() const;
  const OpenReport& open_report() const;
  // Notices of what a call after Open did (a reader recovering after a writer
  // died under it); the caller prints them like Open's.
  std::vector<std::string> TakeNotices();
  uint64_t length() const;
  // Whether this is a writer (opened with io.writable): it may take updates.
  bool writable() const;
  // The last log sequence applied to the array and the buffer.
  uint64_t applied_sequence() const;

  // The summary of [p, q), consistent with one log sequence (see above);
  // *as_of (optional) receives it. Kind ola: its index moments are the Ola
  // buffer's, of order N − 1 (the rest from the order-0 tree); so are
  // SummarizeBatch's. cost (optional): what the query asked of the devices
  // (its reads once merged; every attempt of a reader that retried).
  // REQUIRES: p <= q <= length() (else OutOfRange)
  Result<RangeSummary> Summarize(uint64_t p, uint64_t q, bool need_extremes, QueryCost* cost = nullptr,
                                 uint64_t* as_of = nullptr);
  // The summaries of every range, in order, into *out. The reads of up to 256
  // consecutive ranges go out in one batch (io_uring keeps io.queue_depth in
  // flight; overlapping and touching reads are merged) and their answers are
  // consistent with one log sequence, which as_of (optional) receives per
  // range; costs (optional) gets each range's QueryCost (its own reads, as if
  // alone) and read (optional) what the whole batch asked of the devices once
  // its reads were merged (every attempt of a reader that retried counted).
  // A range outside the array is OutOfRange ("range #K P:Q is outside ...")
  // before anything is read.
  // Kind ola: the index moments M_t(p, q) = Σ_{i∈[p,q)} (i − p)^t a_i,
  // t = 0..N−1, from the Ola buffer (OLA.md states the bound), consistent
  // with one log sequence as Summarize is. InvalidArgument for kind hbb.
  // REQUIRES: p <= q <= length() (else OutOfRange)
  // cost (optional): the cells read from the array, the Ola slots checked and read (tier_bytes).
  Result<IndexMoments> SummarizeIndex(uint64_t p, uint64_t q, uint64_t* as_of = nullptr, QueryCost* cost = nullptr);
  [[nodiscard]] Status SummarizeBatch(std::span<const IndexRange> ranges, bool need_extremes,
                                      std::vector<RangeSummary>* out, std::vector<QueryCost>* costs = nullptr,
                                      std::vector<uint64_t>* as_of = nullptr, QueryCost* read = nullptr);
  // Kind ola: every range's index moments from the Ola buffer alone (as
  // SummarizeIndex, none of the tree's partial leaves read), into *out in
  // order; up to 256 consecutive ranges consistent with one log sequence, as
  // SummarizeBatch's. InvalidArgument for kind hbb; OutOfRange for a range
  // outside the array, before anything is read.
  [[nodiscard]] Status SummarizeIndexBatch(std::span<const IndexRange> ranges, std::vector<IndexMoments>* out,
                                           std::vector<QueryCost>* costs = nullptr);

  // Every statistic of `stats` over [p, q), in order (statistics.h), as
  // `momenta query` and Python answer them: from the range's summary (with
  // extremes when a stat needs them), or — when the buffer keeps index
  // moments of its own (kind ola) and every stat follows from them
  // (OlaAlone: not an integer dtype's sum or mean) — from those alone
  // (SummarizeIndex: none of the tree's partial leaves read). A failed read
  // gives its error as Summarize does; a statistic with no answer (the mean
  // of an empty range) its error with the array's path as context.
  // cost (optional): what the query asked of the devices.
  // REQUIRES: p <= q <= length() (else OutOfRange)
  Result<std::vector<StatAnswer>> Stat(uint64_t p, uint64_t q, std::span<const momenta::Stat> stats,
                                       const StatParams& params, QueryCost* cost = nullptr);
  // Summarizes every range for the statistics `stats` (every stat any range
  // will be asked, repeats allowed), chosen as Stat chooses, into *out,
  // whose Answer(k, ...) then answers ranges[k]. Reads as SummarizeBatch
  // (or SummarizeIndexBatch); *read (optional) is added what the batch asked
  // of the devices.
  [[nodiscard]] Status StatBatch(std::span<const IndexRange> ranges, std::span<const momenta::Stat> stats,
                                 RangeAnswers* out, QueryCost* read = nullptr);

  // a[first + k] = values[k], all at `time`. Range and values are checked
  // before anything changes.
  [[nodiscard]] Status Write(uint64_t first, std::span<const Value> values, int64_t time = kLogTimeNow);
  // Scattered updates, applied in order (a later one to the same index wins).
  // All or nothing on a full disk: bad input is refused, and the log's frames
  // and sequence numbers, the buffer's node pages and the array's blocks for
  // every update are reserved, before anything changes; a failure there says
  // "(nothing was applied: ...)". An I/O error after that leaves the updates
  // before it applied and logged, and its message says which.
  // (Write, for a consecutive range, is all or nothing the same way.)
  // A cancellation request (storage/util/cancel.h) stops it between two chunks of
  // a few thousand updates with Status::Interrupted; *applied (optional)
  // receives how many of `updates`, from the first, were applied either way.
  [[nodiscard]] Status Apply(std::span<const IndexedValue> updates, size_t* applied = nullptr);
  // Durable per the sync policy: the log is synced (kBatch); every few
  // million records the array and the buffer are also checkpointed.
  [[nodiscard]] Status Commit();
  // Commit, then checkpoint the array and the buffer (synced unless kNone), so
  // that reopening replays nothing. The destructor does it too, ignoring errors.
  [[nodiscard]] Status Close();

  // Rebuilds the buffer from the array with `options` (e.g. another order).
  // The new file replaces the old one atomically; readers reopen it.
  Result<BuildStats> Rebuild(const TreeOptions& options, const BuildProgress& progress = {});
  // Recomputes every node from the array into a scratch tree and compares.
  Result<VerifyReport> Verify(const BuildProgress& progress = {});

 private:
  struct Impl;                       // buffered_array_internal.h
  friend struct BufferedArrayParts;  // buffered_array_parts.h: tests and benchmarks reach the parts
  explicit BufferedArray(std::unique_ptr<Impl> impl);
  // Whether the buffer keeps index moments of its own (kind ola).
  bool KeepsIndexMoments();

  std::unique_ptr<Impl> impl_;
};

}  // namespace momenta
