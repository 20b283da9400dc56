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
  file_->Recache(offset, length);
  ++blocks_recached_;
}

}  // namespace momenta
