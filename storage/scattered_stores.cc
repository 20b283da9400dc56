#include "storage/scattered_stores.h"

#include <algorithm>

namespace momenta {

ScatteredStores::ScatteredStores(MappedFile* file)
    : file_(file), prepared_((file->size() / kBlockBytes + 64) / 64, 0) {
  file_->AdviseRandomAccess();
}

void ScatteredStores::PrepareBlock(uint64_t block) {
  prepared_[block / 64] |= uint64_t{1} << (block % 64);
  const uint64_t offset = block * kBlockBytes;
  const uint64_t length = std::min(kBlockBytes, file_->size() - offset);
  if (!file_->AnyPageCached(offset, length)) return;  // faults will bring base pages
  file_->DropCleanPages(offset, length);
  ++blocks_dropped_;
}

void ScatteredStores::Fetch(std::vector<uint64_t>* offsets) {
  std::vector<uint64_t>& pages = *offsets;
  for (uint64_t& o : pages) o /= kPageBytes;
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  constexpr uint64_t kPagesPerBlock = kBlockBytes / kPageBytes;
  for (size_t begin = 0; begin < pages.size();) {
    const uint64_t block = pages[begin] / kPagesPerBlock;
    size_t end = begin + 1;
    while (end < pages.size() && pages[end] / kPagesPerBlock == block) ++end;
    Prepare(block * kBlockBytes);
    FetchInBlock(pages.data() + begin, end - begin);
    begin = end;
  }
}

void ScatteredStores::FetchInBlock(const uint64_t* pages, size_t count) {
  // One mincore over the pages' span within the block, then one read per run
  // of adjacent uncached pages.
  const uint64_t first = pages[0];
  const uint64_t span = pages[count - 1] - first + 1;
  if (!file_->CachedPages(first * kPageBytes, span * kPageBytes, &resident_)) return;
  for (size_t k = 0; k < count;) {
    if (resident_[pages[k] - first] & 1) {
      ++k;
      continue;
    }
    size_t run = 1;
    while (k + run < count && pages[k + run] == pages[k] + run && !(resident_[pages[k + run] - first] & 1)) ++run;
    file_->Prefetch(pages[k] * kPageBytes, run * kPageBytes);
    pages_fetched_ += run;
    k += run;
  }
}

}  // namespace momenta
