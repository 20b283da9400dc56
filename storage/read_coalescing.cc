#include "storage/read_coalescing.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace momenta {
namespace {

constexpr size_t kScratchAlign = 4096;

}  // namespace

void CoalescedReads::FreeDeleter::operator()(char* p) const { std::free(p); }

CoalescedReads::CoalescedReads(std::span<const ReadRequest> requests, size_t max_bytes) : requests_(requests) {
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::erase_if(order, [&](size_t k) { return requests[k].length == 0; });
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return requests[a].offset < requests[b].offset; });

  // Groups [first, last) of `order`, each covering bytes [begin, end).
  size_t first = 0;
  while (first < order.size()) {
    const uint64_t begin = requests[order[first]].offset;
    uint64_t end = begin + requests[order[first]].length;
    size_t last = first + 1;
    while (last < order.size()) {
      const ReadRequest& r = requests[order[last]];
      const uint64_t new_end = std::max(end, r.offset + r.length);
      if (r.offset > end || new_end - begin > max_bytes) break;
      end = new_end;
      ++last;
    }
    if (last - first == 1) {
      reads_.push_back(requests[order[first]]);
    } else {
      const size_t bytes = static_cast<size_t>(end - begin);
      void* p = nullptr;
      if (posix_memalign(&p, kScratchAlign, (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign) != 0) {
        ok_ = false;
        reads_.clear();
        return;
      }
      scratch_.emplace_back(static_cast<char*>(p));
      for (size_t k = first; k < last; ++k)
        members_.push_back({order[k], reads_.size(), requests[order[k]].offset - begin});
      reads_.push_back({begin, bytes, scratch_.back().get()});
    }
    first = last;
  }
}

void CoalescedReads::Scatter() const {
  for (const Member& m : members_) {
    const ReadRequest& r = requests_[m.request];
    std::memcpy(r.dest, reads_[m.group].dest + m.at, r.length);
  }
}

}  // namespace momenta
