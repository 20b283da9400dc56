#include "storage/array/array_store.h"

#include <sys/statvfs.h>

#include <cerrno>

namespace momenta {

ArrayStore::ArrayStore(std::unique_ptr<MappedFile> map, uint64_t data_offset, size_t itemsize, uint64_t length)
    : map_(std::move(map)), data_offset_(data_offset), item_(itemsize), length_(length), scattered_(map_.get()) {}

Status ArrayStore::LoadRange(uint64_t first, uint64_t count, char* out) const {
  if (count == 0) return Status::OK();
  assert(count <= length_ - first);
  map_->Prefetch(Offset(first), count * item_);
  if (GuardedCopy(out, Element(first), count * item_)) return Status::OK();
  return AccessFailed(first, /*writing=*/false);
}

void ArrayStore::FetchForStores(std::span<const uint64_t> indices) {
  fetch_offsets_.clear();
  for (const uint64_t index : indices) fetch_offsets_.push_back(Offset(index));
  scattered_.Fetch(&fetch_offsets_);
}

Status ArrayStore::AccessFailed(uint64_t index, bool writing) const {
  struct statvfs fs;
  const bool full = ::statvfs(path().c_str(), &fs) == 0 && fs.f_bavail == 0;
  if (full) return Status::FromErrno(path(), ENOSPC);
  return Status::IOError(path(), std::string("cannot ") + (writing ? "write" : "read") + " element " +
                                     std::to_string(index) + " (the file shrank, or the disk is full)");
}

}  // namespace momenta
