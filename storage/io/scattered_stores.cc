#include "storage/io/scattered_stores.h"

#include <algorithm>

namespace momenta {

ScatteredStores::ScatteredStores(MappedFile* file)
    : file_(file), prepared_((file->size() / kBlockBytes + 64) / 64, 0), resident_blocks_(prepared_.size(), 0) {
  file_->AdviseRandomAccess();
}

void ScatteredStores::PrepareBlock(uint64_t block, bool keep) {
  prepared_[block / 64] |= uint64_t{1} << (block % 64);
  if (keep) return;
  const uint64_t offset = block * kBlockBytes;
  const uint64_t length = std::min(kBlockBytes, file_->size() - offset);
  if (!file_->AnyPageCached(offset, length)) return;  // faults will bring base pages
  file_->DropCleanPages(offset, length);
  ++blocks_dropped_;
}

void ScatteredStores::Fetch(std::vector<uint64_t>* offsets) {
  std::vector<uint64_t>& v = *offsets;
  if (++fetches_ > kResidentWindows) {  // look again at blocks found resident
    std::fill(resident_blocks_.begin(), resident_blocks_.end(), 0);
    fetches_ = 1;
  }
  std::erase_if(v, [&](uint64_t offset) { return Resident(offset / kBlockBytes); });
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end(), [](uint64_t a, uint64_t b) { return a / kPageBytes == b / kPageBytes; }),
          v.end());
  for (size_t begin = 0; begin < v.size();) {
    const uint64_t block = v[begin] / kBlockBytes;
    size_t end = begin + 1;
    while (end < v.size() && v[end] / kBlockBytes == block) ++end;
    const uint64_t block_pages =
        (std::min(file_->size(), (block + 1) * kBlockBytes) - block * kBlockBytes + kPageBytes - 1) / kPageBytes;
    if (!((prepared_[block / 64] >> (block % 64)) & 1)) PrepareBlock(block, /*keep=*/4 * (end - begin) >= block_pages);
    FetchInBlock(v.data() + begin, end - begin);
    begin = end;
  }
}

void ScatteredStores::FetchInBlock(const uint64_t* offsets, size_t count) {
  // Which pages are cached: one mincore over the pages' span when they are
  // dense in it, else one per page (mincore looks up every page of its span
  // that is not mapped: a span of 512 pages for 3 of them costs more than
  // the 3 lookups). Then one read per run of adjacent uncached pages.
  auto page = [&](size_t k) { return offsets[k] / kPageBytes; };
  const uint64_t first = page(0);
  const uint64_t span = page(count - 1) - first + 1;
  const bool dense = span <= 16 * count;  // a lookup costs ~1/16 of a system call
  if (4 * count >= kBlockBytes / kPageBytes) {
    // A hot window (a quarter of the block's pages): one mincore over the
    // whole block, which also says whether it is wholly resident (then later
    // windows skip it). A sparse one looks at its own span only: a lookup of
    // a page that is not mapped costs about as much as a page asked for.
    const uint64_t block = offsets[0] / kBlockBytes, block_page = block * (kBlockBytes / kPageBytes);
    if (!file_->CachedPages(block * kBlockBytes, kBlockBytes, &resident_)) return;
    if (std::all_of(resident_.begin(), resident_.end(), [](unsigned char r) { return r & 1; }))
      resident_blocks_[block / 64] |= uint64_t{1} << (block % 64);
    resident_.erase(resident_.begin(), resident_.begin() + static_cast<std::ptrdiff_t>(first - block_page));
  } else if (dense && !file_->CachedPages(first * kPageBytes, span * kPageBytes, &resident_)) {
    return;
  }
  std::vector<unsigned char> one;
  auto cached = [&](size_t k) {
    if (dense) return (resident_[page(k) - first] & 1) != 0;
    return !file_->CachedPages(page(k) * kPageBytes, kPageBytes, &one) || (one[0] & 1) != 0;
  };
  for (size_t k = 0; k < count;) {
    if (cached(k)) {
      ++k;
      continue;
    }
    size_t run = 1;
    while (k + run < count && page(k + run) == page(k) + run && !cached(k + run)) ++run;
    file_->Prefetch(page(k) * kPageBytes, run * kPageBytes);
    pages_fetched_ += run;
    k += run;
  }
}

}  // namespace momenta
