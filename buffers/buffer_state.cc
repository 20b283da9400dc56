// BufferState: what every role of the facade shares (buffered_array_internal.h).
#include <utility>

#include "buffers/buffer_kind.h"
#include "buffers/buffered_array_internal.h"
#include "buffers/tree/tree_maintenance.h"
#include "storage/array/array_store.h"

namespace momenta {

BufferState::BufferState(std::unique_ptr<ArrayFile> array, std::string sidecar, const BufferedArrayOptions& options)
    : array_(std::move(array)),
      sidecar_(std::move(sidecar)),
      tree_path_(sidecar_ + "/tree"),
      options_(options),
      maintenance_(std::make_unique<TreeMaintenance>(*array_)) {
  buffer_ = TreeAloneBuffer(OlaPath());
}

BufferState::~BufferState() = default;

Result<std::string> BufferState::OpenBuffer(bool require_clean) {
  std::string why;
  auto opened =
      OpenMomentBuffer(OlaPath(), *tree_, tree_writable_ || lock_ != nullptr, array_->length(), require_clean, &why);
  if (!opened.ok()) {
    buffer_ = TreeAloneBuffer(OlaPath());
    return opened.status();
  }
  buffer_ = std::move(opened).value();
  return why;
}

Status BufferState::CheckWritable() const {
  if (log_) return Status::OK();
  return Status::InvalidArgument(array_->path(), "opened read-only; updates need a writable open");
}

Status BufferState::OpenStoreOnce() {
  if (store_) return Status::OK();
  auto store = array_->OpenStore();
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();
  return Status::OK();
}

bool BufferState::IsTreeDamage(const Status& s) const {
  if (s.code() != Status::Code::kCorruption) return false;
  const std::string text = s.ToString();
  return text.find(tree_path_) != std::string::npos || buffer_->NamesFile(text);
}

void BufferState::AddLateNotices(std::vector<std::string> notices) {
  std::lock_guard<std::mutex> hold(notices_mutex_);
  for (auto& n : notices) late_notices_.push_back(std::move(n));
}

std::vector<std::string> BufferState::TakeNotices() {
  std::lock_guard<std::mutex> hold(notices_mutex_);
  return std::exchange(late_notices_, {});
}

}  // namespace momenta
