#include "storage/io/read_flow.h"

#include <algorithm>

namespace momenta {

void ReadFlow::Allow(size_t n) {
  std::lock_guard lock(mu_);
  if (n <= allowed_) return;
  allowed_ = n;
  cv_.notify_all();
}

void ReadFlow::Stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  cv_.notify_all();
}

bool ReadFlow::WaitLanded(size_t n) {
  std::unique_lock lock(mu_);
  wanted_ = n;
  cv_.wait(lock, [&] { return landed_ >= n || finished_; });
  wanted_ = 0;
  return landed_ >= n;
}

void ReadFlow::Landed(size_t n) {
  std::lock_guard lock(mu_);
  landed_ = std::max(landed_, n);
  if (wanted_ != 0 && landed_ >= wanted_) cv_.notify_all();
}

bool ReadFlow::WaitAllowed(size_t next) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return next < allowed_ || stopped_; });
  return !stopped_;
}

bool ReadFlow::Allowed(size_t next) {
  std::lock_guard lock(mu_);
  return next < allowed_ && !stopped_;
}

bool ReadFlow::Stopped() {
  std::lock_guard lock(mu_);
  return stopped_;
}

void ReadFlow::Finish() {
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

}  // namespace momenta
