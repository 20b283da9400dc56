// BufferedArray::Summarize: a query, consistent with one log sequence (the
// seqlock on the buffer header; see buffered_array.h).
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "buffers/buffer_internal.h"
#include "buffers/buffered_array_internal.h"

namespace momenta {
namespace {

// How often a reader whose seqlock stays taken checks that the writer lives.
constexpr int64_t kLivenessCheckNs = 20'000'000;

}  // namespace

bool BufferedArray::Impl::IsTreeDamage(const Status& s) const {
  return s.code() == Status::Code::kCorruption && s.ToString().find(tree_path_) != std::string::npos;
}

Result<RangeSummary> BufferedArray::Impl::Summarize(uint64_t p, uint64_t q, bool need_extremes,
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

}  // namespace momenta
