#include "stream/protocol/site_mirror.h"

namespace momenta {

namespace {
constexpr uint64_t kMaxLevel = uint64_t{1} << 40;  // the count grid never gets near
constexpr uint64_t kMaxHalf = uint64_t{1} << 53;   // exact in a double
}  // namespace

Status SiteMirror::Apply(const Message& m) {
  switch (m.type) {
    case MessageType::kBcDelta: {
      const int64_t next = static_cast<int64_t>(level_) + m.delta;
      if (m.delta < -static_cast<int64_t>(kMaxLevel) || m.delta > static_cast<int64_t>(kMaxLevel) || next < 0 ||
          static_cast<uint64_t>(next) > kMaxLevel)
        return Status::Corruption("message", "count level " + std::to_string(next) + " out of range");
      level_ = static_cast<uint64_t>(next);
      break;
    }
    case MessageType::kAcSet:
      if (m.count > kMaxHalf) return Status::Corruption("message", "item count out of range");
      if (m.count == 0) {
        ac_.erase(m.item);
      } else {
        if (!ac_.count(m.item) && ac_.size() >= max_entries_)
          return Status::Corruption("message", "more items turned on than the protocol allows");
        ac_[m.item] = m.count;
      }
      break;
    case MessageType::kAcOff:
      ac_.erase(m.item);
      break;
    case MessageType::kQCount:
      drift_n_ = m.count;
      break;
    case MessageType::kQLevel:
      if (!bounds_.count(m.item) && bounds_.size() >= max_entries_)
        return Status::Corruption("message", "more quantile boundaries than the protocol allows");
      bounds_[m.item] = m.count;
      break;
    case MessageType::kQDrop:
      bounds_.erase(m.item);
      break;
    case MessageType::kQSummary:
      if (m.pairs.size() > max_entries_) return Status::Corruption("message", "summary too large");
      summary_ = m;
      break;
  }
  return Status::OK();
}

std::vector<Message> SiteMirror::Snapshot(int64_t tick) const {
  std::vector<Message> out;
  auto make = [&](MessageType type) -> Message& {
    out.emplace_back();
    out.back().type = type;
    out.back().tick = tick;
    return out.back();
  };
  if (level_ > 0) make(MessageType::kBcDelta).delta = static_cast<int64_t>(level_);
  for (const auto& [item, half] : ac_) {
    Message& m = make(MessageType::kAcSet);
    m.item = item;
    m.count = half;
  }
  if (drift_n_ > 0) make(MessageType::kQCount).count = drift_n_;
  for (const auto& [value, level] : bounds_) {
    Message& m = make(MessageType::kQLevel);
    m.item = value;
    m.count = level;
  }
  if (summary_) {
    out.push_back(*summary_);
    out.back().site = 0;
    out.back().tick = tick;
  }
  return out;
}

void SiteMirror::Clear() {
  level_ = 0;
  ac_.clear();
  drift_n_ = 0;
  bounds_.clear();
  summary_.reset();
}

}  // namespace momenta
