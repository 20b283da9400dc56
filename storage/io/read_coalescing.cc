#include "storage/io/read_coalescing.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace momenta {
namespace {

constexpr size_t kPage = 4096;

size_t RoundUp(size_t n) { return (n + kPage - 1) / kPage * kPage; }

}  // namespace

void ReadArena::FreeDeleter::operator()(char* p) const { std::free(p); }

char* ReadArena::Reserve(size_t bytes) {
  bytes = std::max(RoundUp(bytes), kPage);
  if (bytes > capacity_) {
    void* p = nullptr;
    memory_.reset();
    capacity_ = 0;
    if (posix_memalign(&p, kPage, bytes) != 0) return nullptr;
    memory_.reset(static_cast<char*>(p));
    capacity_ = bytes;
  }
  return memory_.get();
}

CoalescedReads::CoalescedReads(std::span<const ReadRequest> requests, size_t max_bytes) : members_(requests.size()) {
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
    for (size_t k = first; k < last; ++k) members_[order[k]] = {reads_.size(), requests[order[k]].offset - begin};
    const size_t length = static_cast<size_t>(end - begin);
    reads_.push_back({begin, length, nullptr});
    places_.push_back(bytes_);
    bytes_ += RoundUp(length);
    first = last;
  }
}

void CoalescedReads::Place(char* arena) {
  for (size_t g = 0; g < reads_.size(); ++g) reads_[g].dest = arena + places_[g];
}

const char* CoalescedReads::Where(size_t k) const {
  const Member& m = members_[k];
  return m.group == SIZE_MAX ? nullptr : reads_[m.group].dest + m.at;
}

}  // namespace momenta
