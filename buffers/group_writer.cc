#include "buffers/group_writer.h"

#include <utility>

#include "storage/array/array_file.h"
#include "storage/npy/dtype.h"

namespace momenta {

using Clock = std::chrono::steady_clock;

GroupWriter::GroupWriter(std::unique_ptr<BufferedArray> ba, const GroupWriterOptions& options)
    : ba_(std::move(ba)), path_(ba_->array().path()), options_(options) {
  durable_sequence_ = ba_->applied_sequence();
}

GroupWriter::~GroupWriter() { (void)Close(); }

Result<std::unique_ptr<GroupWriter>> GroupWriter::Start(std::unique_ptr<BufferedArray> ba,
                                                        const GroupWriterOptions& options) {
  const std::string& path = ba->array().path();
  if (!ba->writable()) return Status::InvalidArgument(path, "a group writer needs a writable open");
  if (options.max_group == 0) return Status::InvalidArgument(path, "a group writer's max_group must be at least 1");
  if (options.max_delay_ms < 0) return Status::InvalidArgument(path, "a group writer's max_delay_ms is negative");
  std::unique_ptr<GroupWriter> gw(new GroupWriter(std::move(ba), options));
  gw->thread_ = std::thread([w = gw.get()] { w->Run(); });
  return gw;
}

Result<uint64_t> GroupWriter::Submit(std::span<const IndexedValue> updates) {
  // The array's path, dtype and length do not change while it is open.
  const ArrayFile& array = ba_->array();
  for (size_t k = 0; k < updates.size(); ++k) {  // checked before any is queued
    const IndexedValue& u = updates[k];
    if (Status s = array.CheckRange(u.index, 1); !s.ok()) return s.WithNote("update #" + std::to_string(k));
    if (!ValueFits(array.dtype(), u.value))
      return Status::InvalidArgument(path_, "update #" + std::to_string(k) + ": value '" + FormatValue(u.value) +
                                                "' does not fit dtype " + std::string(DTypeName(array.dtype())));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_) return Status::InvalidArgument(path_, "the group writer is closed");
  if (failed_ticket_ != 0) return failure_.WithNote("the group writer stopped at an earlier group");
  if (updates.empty()) return last_ticket_;  // nothing to wait for beyond what came before
  if (open_.empty()) opened_ = Clock::now();
  open_.insert(open_.end(), updates.begin(), updates.end());
  ++last_ticket_;
  work_.notify_one();
  return last_ticket_;
}

Result<uint64_t> GroupWriter::WaitDurable(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return committed_ticket_ >= ticket || (failed_ticket_ != 0 && failed_ticket_ <= ticket); });
  if (committed_ticket_ >= ticket) return durable_sequence_;
  return failure_;
}

Result<uint64_t> GroupWriter::Write(std::span<const IndexedValue> updates) {
  auto ticket = Submit(updates);
  if (!ticket.ok()) return ticket.status();
  return WaitDurable(*ticket);
}

uint64_t GroupWriter::groups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return groups_;
}

void GroupWriter::Run() {
  std::vector<IndexedValue> group;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_.wait(lock, [&] { return closing_ || !open_.empty(); });
    if (open_.empty()) break;  // closing, nothing left
    // The open group closes max_delay after it opened, when full, or at Close.
    const auto deadline = opened_ + std::chrono::milliseconds(options_.max_delay_ms);
    work_.wait_until(lock, deadline, [&] { return closing_ || open_.size() >= options_.max_group; });
    group.swap(open_);
    open_.clear();
    const uint64_t last = last_ticket_;
    lock.unlock();
    const Status s = ApplyGroup(group);
    const uint64_t sequence = ba_->applied_sequence();
    lock.lock();
    if (!s.ok()) {
      // This group and every later ticket fail; nothing more is applied.
      failed_ticket_ = committed_ticket_ + 1;
      failure_ = s;
      closing_ = true;
      open_.clear();
      done_.notify_all();
      break;
    }
    committed_ticket_ = last;
    durable_sequence_ = sequence;
    ++groups_;
    done_.notify_all();
    group.clear();
  }
}

Status GroupWriter::ApplyGroup(const std::vector<IndexedValue>& updates) {
  size_t applied = 0;
  if (Status s = ba_->Apply(updates, &applied); !s.ok()) {
    if (applied > 0) (void)ba_->Commit();  // what was applied stays, durable per policy
    return s;
  }
  return ba_->Commit();
}

Status GroupWriter::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return close_status_;
    closing_ = true;
    work_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  close_status_ = failed_ticket_ != 0 ? failure_ : ba_->Close();
  return close_status_;
}

}  // namespace momenta
