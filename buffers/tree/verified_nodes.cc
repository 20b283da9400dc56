#include "buffers/tree/verified_nodes.h"

namespace momenta {

VerifiedNodes::VerifiedNodes(uint64_t nodes) : blocks_(new Block[nodes / kBlockSlots + 1]) {}

void VerifiedNodes::Add(uint64_t slot, uint64_t epoch) {
  if (epoch % 2 != 0) return;
  Block& b = blocks_[slot / kBlockSlots];
  std::lock_guard<std::mutex> hold(record_);
  if (b.epoch.load(std::memory_order_relaxed) != epoch) {
    // Odd while the bits are cleared: a reader that sees the new epoch sees
    // them cleared (its second load of the epoch orders it).
    b.epoch.store(1, std::memory_order_release);
    for (auto& word : b.bits) word.store(0, std::memory_order_release);
    b.epoch.store(epoch, std::memory_order_release);
  }
  b.bits[(slot % kBlockSlots) / 64].fetch_or(uint64_t{1} << (slot % 64), std::memory_order_release);
}

}  // namespace momenta
