// ArrayFile: one .npy array on disk, seen as a flat array of `length()`
// elements of one dtype, read and written through an IoBackend.
//
// Element indices are flat C-order indices; ranges are half-open [first,
// first + count). Every method checks its range and returns OutOfRange
// ("Out of range: data.npy: index 10 is past the end (length 10)") rather than
// touching bytes outside the data. Not thread-safe (one IoBackend inside).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "storage/array/sidecar.h"  // SidecarPath: where the buffer and the log live
#include "storage/io/io_backend.h"
#include "storage/npy/dtype.h"
#include "storage/npy/npy_format.h"
#include "storage/util/status.h"

namespace momenta {

class ArrayStore;  // storage/array/array_store.h
class MappedFile;  // storage/io/mapped_file.h

class ArrayFile {
 public:
  ArrayFile(const ArrayFile&) = delete;
  ArrayFile& operator=(const ArrayFile&) = delete;
  ~ArrayFile();

  // Creates a new sparse .npy file (fails if `path` exists): a v1.0 header
  // padded to 4096 bytes, then length*itemsize bytes of holes, so creating a
  // 2^40-element array is instant and allocates no data blocks. (An empty
  // array's header is the shortest multiple of 64 instead: NumPy cannot mmap
  // zero bytes at a page-aligned end of file.) On failure nothing is left
  // behind and an existing file is never touched.
  static Result<std::unique_ptr<ArrayFile>> Create(const std::string& path, DType dtype,
                                                   std::span<const uint64_t> shape, IoOptions io,
                                                   std::string* notice = nullptr);

  // Opens an existing .npy file in place. Rejects (Corruption / NotSupported,
  // naming the file) a foreign or damaged header, unsupported dtypes,
  // fortran_order, and a file shorter than its header says.
  static Result<std::unique_ptr<ArrayFile>> Open(const std::string& path, IoOptions io, std::string* notice = nullptr);

  // Wraps an already open backend (tests inject faulty backends this way).
  static Result<std::unique_ptr<ArrayFile>> OpenWith(std::unique_ptr<IoBackend> io);

  const std::string& path() const { return io_->path(); }
  const NpyHeader& header() const { return header_; }
  DType dtype() const { return header_.dtype; }
  size_t itemsize() const { return DTypeSize(header_.dtype); }
  uint64_t length() const { return length_; }
  // File byte offset of element `index`. REQUIRES: index <= length()
  uint64_t ByteOffset(uint64_t index) const;
  IoBackend& io() { return *io_; }

  // The file mapped read-only and whole (MADV_RANDOM: a fault reads only its
  // own page), made on first call and shared by every thread that queries
  // this array; the fault guard is installed with it. Queries sum the pieces
  // whose pages are cached from it rather than reading them; every access
  // to it runs under GuardedCall (storage/io/fault_guard.h), since the file
  // may be truncated under it. Null when the file cannot be mapped (empty,
  // shorter than its header says, or mmap failed): then everything is read.
  // Thread-safe.
  const MappedFile* ReadMapping();

  // REQUIRES of each: the range lies inside [0, length()); else OutOfRange.
  // Raw little-endian element bytes: out holds count * itemsize() bytes.
  // ReadValues replaces *out's contents with the count values; ReadDoubles
  // fills out[0, count) (i8/u8 beyond 2^53 round to the nearest double).
  // Large ranges are read in 8 MiB pieces, batched through ReadBatch.
  [[nodiscard]] Status ReadRaw(uint64_t first, uint64_t count, char* out);
  [[nodiscard]] Status ReadValues(uint64_t first, uint64_t count, std::vector<Value>* out);
  [[nodiscard]] Status ReadDoubles(uint64_t first, uint64_t count, double* out);

  // Writes count elements. Blocks are reserved first (IoBackend::Allocate), so
  // disk-full fails before any element changes. Durable after Sync().
  [[nodiscard]] Status WriteRaw(uint64_t first, uint64_t count, const char* bytes);
  // Values should come from ParseValue / ValueFromDouble; one that does not
  // fit dtype() anyway is InvalidArgument before any byte is written.
  [[nodiscard]] Status WriteValues(uint64_t first, std::span<const Value> values);

  // OutOfRange unless [first, first + count) lies inside [0, length()).
  [[nodiscard]] Status CheckRange(uint64_t first, uint64_t count) const;
  // IOError if the file is now shorter than header + data (it shrank under us).
  [[nodiscard]] Status CheckSize();
  [[nodiscard]] Status Sync() { return io_->Sync(); }

  // The writer's store path: the file mapped writable, for guarded element
  // loads and stores (storage/array/array_store.h); Sync() makes its stores
  // durable. Fails with the open's error when the file cannot be opened for
  // writing, and IOError when it is now shorter than its header says. Taking
  // the array's writer lock is the caller's business.
  Result<std::unique_ptr<ArrayStore>> OpenStore();

 private:
  ArrayFile(std::unique_ptr<IoBackend> io, NpyHeader header);
  // Reads [first, first + count) in chunks of at most 8 MiB, handing each to
  // take(elements done before it, elements in it, raw bytes).
  [[nodiscard]] Status ReadChunked(uint64_t first, uint64_t count,
                                   const std::function<void(uint64_t, uint64_t, const char*)>& take);

  std::unique_ptr<IoBackend> io_;
  const NpyHeader header_;
  const uint64_t length_;  // header_.length(), cached
  std::once_flag map_once_;
  std::unique_ptr<MappedFile> read_map_;  // ReadMapping(); null until asked, or when it failed
};

}  // namespace momenta
