// VerifiedNodes: which nodes of a tree file this process has already checked
// (NodeCodec::Classify, MomentTree::VerifyNode) since the file last changed,
// so a warm query checks each node once, not on every read.
//
// "Since the file last changed" is the header's write_epoch (the readers'
// seqlock, tree_file.h): every writer's chunk moves it, so a node checked at
// epoch E is trusted only by queries that also run at epoch E. A query at an
// odd epoch (a writer mid-chunk) neither trusts nor records anything.
//
// The guarantee that remains: a node is checked the first time a query of
// this process takes it at each write_epoch (and after every Open: a fresh
// MomentTree starts empty). Damage that lands in the file without a writer's
// chunk — a flipped bit on the device after its page was first read, a
// foreign process storing into the file — is caught by the next query after
// the epoch moves or the tree is reopened, not by every query in between.
//
// Thread-safe: readers sharing one tree (one BufferedArray in several
// threads) may ask and record at once. Recording takes a mutex (once per
// node and epoch); asking takes none.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace momenta {

class VerifiedNodes {
 public:
  // Room for `nodes` slots (TreeLayout::total_nodes()).
  explicit VerifiedNodes(uint64_t nodes);

  // True when `slot` was recorded at `epoch` (never for an odd epoch).
  bool Has(uint64_t slot, uint64_t epoch) const {
    if (epoch % 2 != 0) return false;
    const Block& b = blocks_[slot / kBlockSlots];
    if (b.epoch.load(std::memory_order_acquire) != epoch) return false;
    const bool bit = (b.bits[(slot % kBlockSlots) / 64].load(std::memory_order_acquire) >> (slot % 64)) & 1;
    // A reset to a newer epoch between the two loads clears the bit first:
    // the epoch read again tells.
    return bit && b.epoch.load(std::memory_order_acquire) == epoch;
  }
  // Records that `slot` passed its check at `epoch` (nothing for an odd
  // epoch). A block last recorded at another epoch forgets its slots first.
  void Add(uint64_t slot, uint64_t epoch);

 private:
  static constexpr uint64_t kBlockSlots = 4096;
  struct Block {
    std::atomic<uint64_t> epoch{1};  // odd: holds nothing (no query runs at an odd epoch)
    std::atomic<uint64_t> bits[kBlockSlots / 64] = {};
  };
  std::unique_ptr<Block[]> blocks_;
  std::mutex record_;  // held by Add: a reset and a record never interleave
};

}  // namespace momenta
