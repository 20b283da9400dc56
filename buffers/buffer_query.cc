// BufferedArray's queries: one range or a batch, each answer consistent with
// one log sequence (the seqlock on the buffer header; see buffered_array.h),
// from any number of threads on a reader.
//
// Threads (readers only): every query holds tree_mutex_ shared while it
// reads tree_ and array_; what replaces or rewrites them (reopening a retired
// tree, a recovery or a rebuild for damage) holds it exclusively, after
// letting go of its shared hold and looking again. Each query thread reads
// through backends of its own (an IoLease: the primary pair, else one from
// io_pool_, else a new pair), since one backend serves one thread at a time.
#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "buffers/buffered_array_internal.h"
#include "buffers/tree/tree_seqlock.h"

namespace momenta {
namespace {

// How often a reader whose seqlock stays taken checks that the writer lives.
constexpr int64_t kLivenessCheckNs = 20'000'000;

std::string RangeText(const IndexRange& r) { return std::to_string(r.begin) + ":" + std::to_string(r.end); }

}  // namespace

// The backends one query reads through, returned to the handle at the end.
class ConsistentReads::IoLease {
 public:
  explicit IoLease(ConsistentReads& reads) : reads_(reads) {}
  IoLease(const IoLease&) = delete;
  IoLease& operator=(const IoLease&) = delete;
  ~IoLease() {
    if (primary_) reads_.primary_io_busy_.store(false, std::memory_order_release);
    if (pair_) {
      std::lock_guard<std::mutex> hold(reads_.io_pool_mutex_);
      reads_.io_pool_.push_back(std::move(pair_));
    }
  }
  // REQUIRES: the caller holds tree_mutex_ (shared or exclusive).
  Result<QueryIo> Take() {
    if (!reads_.primary_io_busy_.exchange(true, std::memory_order_acquire)) {
      primary_ = true;
      return QueryIo{&reads_.s_.array_->io(), &reads_.s_.tree_->io(), &reads_.primary_arena_};
    }
    {
      std::lock_guard<std::mutex> hold(reads_.io_pool_mutex_);
      if (!reads_.io_pool_.empty()) {
        pair_ = std::move(reads_.io_pool_.back());
        reads_.io_pool_.pop_back();
      }
    }
    if (!pair_) {
      IoOptions io = reads_.s_.options_.io;
      io.writable = false;
      auto array = OpenIoBackend(reads_.s_.array_->path(), io);
      if (!array.ok()) return array.status();
      io.direct = false;  // as MomentTree::Open reads its nodes
      auto tree = OpenIoBackend(reads_.s_.tree_->path(), io);
      if (!tree.ok()) return tree.status();
      pair_ = std::make_unique<QueryBackends>();
      pair_->array = std::move(array).value();
      pair_->tree = std::move(tree).value();
    }
    return QueryIo{pair_->array.get(), pair_->tree.get(), &pair_->arena};
  }

 private:
  ConsistentReads& reads_;
  bool primary_ = false;
  std::unique_ptr<QueryBackends> pair_;
};

Status ConsistentReads::CheckRanges(std::span<const IndexRange> ranges) const {
  for (size_t k = 0; k < ranges.size(); ++k)
    if (ranges[k].begin > ranges[k].end || ranges[k].end > s_.array_->length())
      return Status::OutOfRange(s_.array_->path(),
                                (ranges.size() > 1 ? "range #" + std::to_string(k + 1) + " " : "range ") +
                                    RangeText(ranges[k]) + " is outside the array (length " +
                                    std::to_string(s_.array_->length()) + ")");
  return Status::OK();
}

Result<RangeSummary> ConsistentReads::Summarize(uint64_t p, uint64_t q, bool need_extremes, QueryCost* cost,
                                                uint64_t* as_of) {
  const IndexRange range{p, q};
  MOMENTA_RETURN_IF_ERROR(CheckRanges({&range, 1}));
  std::vector<RangeSummary> out;
  QueryCost read;
  MOMENTA_RETURN_IF_ERROR(SummarizeConsistent({&range, 1}, need_extremes, &out, nullptr, as_of, &read));
  if (cost) *cost = read;
  return std::move(out[0]);
}

Status ConsistentReads::SummarizeBatch(std::span<const IndexRange> ranges, bool need_extremes,
                                       std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                       std::vector<uint64_t>* as_of, QueryCost* read) {
  MOMENTA_RETURN_IF_ERROR(CheckRanges(ranges));
  out->clear();
  if (costs) costs->clear();
  if (as_of) as_of->clear();
  std::vector<RangeSummary> part;
  std::vector<QueryCost> part_costs;
  for (size_t first = 0; first < ranges.size(); first += kBatchChunk) {
    const auto chunk = ranges.subspan(first, std::min(kBatchChunk, ranges.size() - first));
    uint64_t sequence = 0;
    MOMENTA_RETURN_IF_ERROR(SummarizeConsistent(chunk, need_extremes, &part, &part_costs, &sequence, read));
    for (auto& s : part) out->push_back(std::move(s));
    if (costs) costs->insert(costs->end(), part_costs.begin(), part_costs.end());
    if (as_of) as_of->insert(as_of->end(), chunk.size(), sequence);
  }
  return Status::OK();
}

// REQUIRES: every range passed CheckRanges.
Status ConsistentReads::SummarizeConsistent(std::span<const IndexRange> ranges, bool need_extremes,
                                            std::vector<RangeSummary>* out, std::vector<QueryCost>* costs,
                                            uint64_t* as_of, QueryCost* read) {
  // The buffer's own index moments, where its kind keeps them, replace the
  // tree's, read in the same consistent read. `read` gains the reads of the attempt that answered, not of the ones a
  // writer or a rebuild made ReadConsistent repeat.
  QueryCost attempt;
  Status s = ReadConsistent(
      [&](const QueryIo& io) -> Status {
        attempt = {};
        MOMENTA_RETURN_IF_ERROR(
            SummarizeRanges(*s_.tree_, *s_.array_, ranges, need_extremes, out, costs, io, read ? &attempt : nullptr));
        return s_.buffer_->AddIndexMoments(io, *s_.array_, ranges, out, costs, &attempt);
      },
      as_of);
  if (s.ok() && read) *read += attempt;
  return s;
}

Result<IndexMoments> ConsistentReads::SummarizeIndex(uint64_t p, uint64_t q, uint64_t* as_of, QueryCost* cost) {
  const IndexRange range{p, q};
  MOMENTA_RETURN_IF_ERROR(CheckRanges({&range, 1}));
  MOMENTA_RETURN_IF_ERROR(s_.buffer_->CheckIndexAlone(*s_.tree_, *s_.array_));
  IndexMoments answer(0);
  MOMENTA_RETURN_IF_ERROR(ReadConsistent(
      [&](const QueryIo& io) { return s_.buffer_->IndexMoments(io, *s_.array_, p, q, &answer, cost); }, as_of));
  return answer;
}

Status ConsistentReads::SummarizeIndexBatch(std::span<const IndexRange> ranges, std::vector<IndexMoments>* out,
                                            std::vector<QueryCost>* costs) {
  MOMENTA_RETURN_IF_ERROR(CheckRanges(ranges));
  MOMENTA_RETURN_IF_ERROR(s_.buffer_->CheckIndexAlone(*s_.tree_, *s_.array_));
  out->assign(ranges.size(), IndexMoments(0));
  if (costs) costs->assign(ranges.size(), QueryCost{});
  for (size_t first = 0; first < ranges.size(); first += kBatchChunk) {
    const size_t count = std::min(kBatchChunk, ranges.size() - first);
    MOMENTA_RETURN_IF_ERROR(ReadConsistent(
        [&](const QueryIo& io) -> Status {
          for (size_t k = first; k < first + count; ++k)
            MOMENTA_RETURN_IF_ERROR(s_.buffer_->IndexMoments(io, *s_.array_, ranges[k].begin, ranges[k].end, &(*out)[k],
                                                             costs ? &(*costs)[k] : nullptr));
          return Status::OK();
        },
        nullptr));
  }
  return Status::OK();
}

Status ConsistentReads::ReadAsWriter(const std::function<Status(const QueryIo&)>& read, uint64_t* as_of) {
  if (as_of) *as_of = s_.tree_->header().log_sequence;
  const QueryIo io{nullptr, nullptr, &primary_arena_};
  Status s = read(io);
  if (s.ok() || !s_.IsTreeDamage(s)) return s;
  s_.AddLateNotices({"rebuilding the moment buffer of " + s_.array_->path() + ": " + s.ToString()});
  BuildStats stats;
  MOMENTA_RETURN_IF_ERROR(opening_.RebuildInPlace(OptionsOfHeader(s_.tree_->header()), s_.options_.progress, &stats));
  return read(io);
}

Status ConsistentReads::ReadConsistent(const std::function<Status(const QueryIo&)>& read, uint64_t* as_of) {
  if (s_.writer()) return ReadAsWriter(read, as_of);
  // A reader: retry until no writer changed anything while we read.
  const int64_t start = MonotonicNs();
  int64_t next_liveness_check = start + kLivenessCheckNs;
  bool rebuilt = false;  // at most one rebuild for damage per query
  for (int attempt = 0;; ++attempt) {
    // What only an exclusive holder may do, found under the shared hold:
    // the work and its reason, done after the shared hold is let go.
    BufferCondition recover;
    bool reopen = false;
    {
      std::shared_lock<std::shared_mutex> shared(s_.tree_mutex_);
      TreeFileHeader& h = s_.tree_->header();
      if (std::atomic_ref<uint32_t>(h.state).load(std::memory_order_acquire) == kTreeRetired) {
        reopen = true;
      } else {
        const uint64_t before = Epoch(h).load(std::memory_order_acquire);
        if (before % 2 == 0) {
          const uint64_t sequence = std::atomic_ref<uint64_t>(h.log_sequence).load(std::memory_order_acquire);
          IoLease lease(*this);
          auto io = lease.Take();
          if (!io.ok()) return io.status();
          const Status s = read(*io);
          std::atomic_thread_fence(std::memory_order_acquire);
          if (Epoch(h).load(std::memory_order_acquire) == before) {
            if (s.ok() || !s_.IsTreeDamage(s)) {
              if (as_of) *as_of = sequence;
              return s;
            }
            // A node failed its check (the read was consistent, so it is
            // damage, not a writer's chunk): rebuild, then answer from the new buffer.
            if (rebuilt) return s;
            rebuilt = true;
            recover = {BufferCondition::Kind::kRebuild, s.ToString()};
          }
        }
        // Never wait on a writer that is not alive: a killed one leaves the
        // seqlock taken for good. Its lock tells (the kernel drops it at death).
        if (const int64_t now = MonotonicNs(); recover.why.empty() && now >= next_liveness_check) {
          next_liveness_check = now + kLivenessCheckNs;
          if (Epoch(h).load(std::memory_order_acquire) % 2 == 1 && !WriterIsAlive(s_.LockPath())) {
            recover = {BufferCondition::Kind::kRecover, "the last writer stopped mid-update"};
            s_.AddLateNotices({"the writer of " + s_.array_->path() + " died while this query waited for it"});
          }
        }
        if (recover.why.empty() && attempt >= 2 && s_.tree_writable_)
          ReaderWait(h).store(MonotonicNs() + kReaderWaitNs, std::memory_order_release);
      }
    }
    if (reopen || !recover.why.empty()) {
      std::unique_lock<std::shared_mutex> exclusive(s_.tree_mutex_);
      MOMENTA_RETURN_IF_ERROR(reopen ? ReopenTreeIfRetired() : RecoverForQuery(recover));
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(attempt < 2 ? 50 : 500));
  }
}

Status ConsistentReads::ReopenTreeIfRetired() {
  if (s_.tree_->header().state != kTreeRetired) return Status::OK();
  auto tree = MomentTree::Open(s_.tree_path_, s_.tree_writable_, s_.options_.io);
  if (!tree.ok()) return tree.status();
  s_.tree_ = std::move(tree).value();
  ResetIoPool();
  // What its kind keeps beside it was renamed into place before it (RebuildInPlace).
  auto why = s_.OpenBuffer(/*require_clean=*/false);
  if (!why.ok()) return why.status();
  if (!why->empty()) return Status::Corruption(s_.OlaPath(), *why);
  return Status::OK();
}

// REQUIRES: tree_mutex_ held exclusively.
Status ConsistentReads::RecoverForQuery(const BufferCondition& why) {
  std::vector<std::string> notices;
  if (why.kind == BufferCondition::Kind::kRebuild) s_.forced_rebuild_ = why.why;
  Status s = opening_.RecoverAsWriter(why, &notices);
  s_.forced_rebuild_.clear();
  s_.AddLateNotices(std::move(notices));
  ResetIoPool();
  return s;
}

void ConsistentReads::ResetIoPool() {
  std::lock_guard<std::mutex> hold(io_pool_mutex_);
  io_pool_.clear();  // their tree backends may read a file that was replaced
}

}  // namespace momenta
