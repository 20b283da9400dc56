#include "storage/array/array_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <functional>

#include "storage/array/array_store.h"
#include "storage/io/file_size_limit.h"
#include "storage/io/mapped_file.h"
#include "storage/io/posix_file.h"

namespace momenta {
namespace {

// Large reads go to the backend in pieces of this size, in batches, so a
// huge range neither needs one huge syscall nor one huge bounce buffer.
constexpr size_t kChunkBytes = size_t{8} << 20;
constexpr size_t kChunksPerBatch = 16;
constexpr size_t kPreambleBytes = 12;  // enough for every .npy version's length field

// Decimal text of first + count, which may exceed 2^64 in a bad request.
std::string EndText(uint64_t first, uint64_t count) {
  __extension__ using U128 = unsigned __int128;
  U128 end = static_cast<U128>(first) + count;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(end % 10)));
    end /= 10;
  } while (end != 0);
  return digits;
}

// Creates `path` exclusively and writes the header and the sparse size. On
// failure whatever was created is removed again; a size past what the file
// system holds names its limit (file_size_limit.h).
Status CreateSparseFile(const std::string& path, const std::string& header, uint64_t data_bytes) {
  auto fd = OpenFile(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (!fd.ok()) return fd.status();  // EEXIST: the existing file is not touched
  Status s = PwriteFully(fd->get(), path, 0, header.size(), header.data());
  const uint64_t size = header.size() + data_bytes;
  if (s.ok() && ::ftruncate(fd->get(), static_cast<off_t>(size)) != 0)
    s = errno == EFBIG ? FileTooLarge(fd->get(), path, "the array (its header included)", header.size(), size)
                       : Status::FromErrno(path, errno);
  if (!s.ok()) ::unlink(path.c_str());
  return s;
}

}  // namespace

ArrayFile::ArrayFile(std::unique_ptr<IoBackend> io, NpyHeader header)
    : io_(std::move(io)), header_(std::move(header)), length_(header_.length()) {}

ArrayFile::~ArrayFile() = default;

Result<std::unique_ptr<ArrayFile>> ArrayFile::Create(const std::string& path, DType dtype,
                                                     std::span<const uint64_t> shape, IoOptions io,
                                                     std::string* notice) {
  MOMENTA_RETURN_IF_ERROR(ValidateNpyShape(dtype, shape, path));
  uint64_t length = 1;
  for (uint64_t d : shape) length *= d;  // no overflow: ValidateNpyShape
  // NumPy cannot mmap an empty array whose data starts at a page boundary at
  // the end of the file, so an empty array gets the shortest header instead.
  const uint64_t data_offset = length > 0 ? kMomentaDataOffset : NpyMinDataOffset(dtype, shape);
  const std::string header = EncodeNpyHeader(dtype, shape, data_offset);
  MOMENTA_RETURN_IF_ERROR(CreateSparseFile(path, header, length * DTypeSize(dtype)));

  io.writable = true;
  auto backend = OpenIoBackend(path, io, notice);
  if (!backend.ok()) {
    ::unlink(path.c_str());
    return backend.status();
  }
  auto file = OpenWith(std::move(backend).value());
  if (!file.ok()) ::unlink(path.c_str());
  return file;
}

Result<std::unique_ptr<ArrayFile>> ArrayFile::Open(const std::string& path, IoOptions io, std::string* notice) {
  auto backend = OpenIoBackend(path, io, notice);
  if (!backend.ok()) return backend.status();
  return OpenWith(std::move(backend).value());
}

Result<std::unique_ptr<ArrayFile>> ArrayFile::OpenWith(std::unique_ptr<IoBackend> io) {
  assert(io != nullptr);
  const std::string& path = io->path();
  auto size = io->Size();
  if (!size.ok()) return size.status();

  // The preamble: magic, version and header length.
  char preamble[kPreambleBytes];
  const size_t have = static_cast<size_t>(std::min<uint64_t>(*size, kPreambleBytes));
  if (have > 0) MOMENTA_RETURN_IF_ERROR(io->Read(0, have, preamble));
  // A short file that is empty or starts like a .npy file is truncated, not foreign.
  const size_t magic = std::min(have, kNpyMagic.size());
  if (have < kPreambleBytes && std::string_view(preamble, magic) == kNpyMagic.substr(0, magic))
    return Status::Corruption(path, "file is " + std::to_string(*size) + " bytes, shorter than the " +
                                        std::to_string(kPreambleBytes) + "-byte .npy preamble");
  auto header_size = NpyHeaderSize(std::span<const char>(preamble, have), path);
  if (!header_size.ok()) return header_size.status();
  if (*header_size > *size)
    return Status::Corruption(path, "file is " + std::to_string(*size) + " bytes, shorter than its " +
                                        std::to_string(*header_size) + "-byte .npy header");

  std::string bytes(*header_size, '\0');
  MOMENTA_RETURN_IF_ERROR(io->Read(0, bytes.size(), bytes.data()));
  auto header = ParseNpyHeader(bytes, path);
  if (!header.ok()) return header.status();
  const uint64_t need = header->data_offset + header->data_bytes();
  if (*size < need)
    return Status::Corruption(path, "file is " + std::to_string(*size) + " bytes, shorter than the " +
                                        std::to_string(need) + " bytes its header promises (" +
                                        std::to_string(header->data_offset) + " + " + std::to_string(header->length()) +
                                        " elements of " + std::string(DTypeName(header->dtype)) + "); truncated?");
  return std::unique_ptr<ArrayFile>(new ArrayFile(std::move(io), std::move(header).value()));
}

Result<std::unique_ptr<ArrayStore>> ArrayFile::OpenStore() {
  InstallFaultGuard();
  auto map = MappedFile::Open(path(), /*writable=*/true);
  if (!map.ok()) return map.status();
  if ((*map)->size() < ByteOffset(length()))
    return Status::IOError(path(), "file is shorter than its header says (it shrank?)");
  return std::unique_ptr<ArrayStore>(new ArrayStore(std::move(map).value(), ByteOffset(0), itemsize(), length()));
}

const MappedFile* ArrayFile::ReadMapping() {
  std::call_once(map_once_, [this] {
    if (length_ == 0) return;
    InstallFaultGuard();
    auto map = MappedFile::Open(path(), /*writable=*/false);
    if (!map.ok() || (*map)->size() < ByteOffset(length_)) return;
    (*map)->AdviseRandomAccess();
    read_map_ = std::move(map).value();
  });
  return read_map_.get();
}

uint64_t ArrayFile::ByteOffset(uint64_t index) const {
  assert(index <= length_);
  return header_.data_offset + index * itemsize();
}

Status ArrayFile::CheckRange(uint64_t first, uint64_t count) const {
  if (first <= length_ && count <= length_ - first) return Status::OK();
  const std::string len = "(length " + std::to_string(length_) + ")";
  if (count == 1) return Status::OutOfRange(path(), "index " + std::to_string(first) + " is past the end " + len);
  return Status::OutOfRange(
      path(), "range " + std::to_string(first) + ":" + EndText(first, count) + " is outside the array " + len);
}

Status ArrayFile::CheckSize() {
  auto size = io_->Size();
  if (!size.ok()) return size.status();
  const uint64_t need = header_.data_offset + header_.data_bytes();
  if (*size < need)
    return Status::IOError(path(), "file is " + std::to_string(*size) + " bytes, shorter than the " +
                                       std::to_string(need) + " bytes its header promises (it shrank?)");
  return Status::OK();
}

Status ArrayFile::ReadRaw(uint64_t first, uint64_t count, char* out) {
  MOMENTA_RETURN_IF_ERROR(CheckRange(first, count));
  const uint64_t start = ByteOffset(first);
  const uint64_t total = count * itemsize();
  std::vector<ReadRequest> batch;
  batch.reserve(std::min<uint64_t>(kChunksPerBatch, total / kChunkBytes + 1));
  for (uint64_t done = 0; done < total;) {
    batch.clear();
    while (done < total && batch.size() < kChunksPerBatch) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, total - done));
      batch.push_back({start + done, n, out + done});
      done += n;
    }
    MOMENTA_RETURN_IF_ERROR(io_->ReadBatch(batch));
  }
  return Status::OK();
}

Status ArrayFile::ReadChunked(uint64_t first, uint64_t count,
                              const std::function<void(uint64_t done, uint64_t n, const char* raw)>& take) {
  const size_t size = itemsize();
  const uint64_t per_chunk = kChunkBytes / size;
  std::vector<char> raw(static_cast<size_t>(std::min(count, per_chunk) * size));
  for (uint64_t done = 0; done < count;) {
    const uint64_t n = std::min(per_chunk, count - done);
    MOMENTA_RETURN_IF_ERROR(ReadRaw(first + done, n, raw.data()));
    take(done, n, raw.data());
    done += n;
  }
  return Status::OK();
}

Status ArrayFile::ReadValues(uint64_t first, uint64_t count, std::vector<Value>* out) {
  MOMENTA_RETURN_IF_ERROR(CheckRange(first, count));
  out->clear();
  out->reserve(count);
  return ReadChunked(first, count, [&](uint64_t, uint64_t n, const char* raw) {
    for (uint64_t k = 0; k < n; ++k) out->push_back(DecodeValue(dtype(), raw + k * itemsize()));
  });
}

Status ArrayFile::ReadDoubles(uint64_t first, uint64_t count, double* out) {
  MOMENTA_RETURN_IF_ERROR(CheckRange(first, count));
  if (dtype() == DType::kF8) return ReadRaw(first, count, reinterpret_cast<char*>(out));
  return ReadChunked(first, count, [&](uint64_t done, uint64_t n, const char* raw) {
    DecodeDoubles(dtype(), raw, static_cast<size_t>(n), out + done);
  });
}

Status ArrayFile::WriteRaw(uint64_t first, uint64_t count, const char* bytes) {
  MOMENTA_RETURN_IF_ERROR(CheckRange(first, count));
  if (count == 0) return Status::OK();
  const uint64_t offset = ByteOffset(first);
  const uint64_t total = count * itemsize();
  // Reserve the blocks first: disk-full must fail before any byte changes.
  MOMENTA_RETURN_IF_ERROR(io_->Allocate(offset, total));
  return io_->Write(offset, std::span<const char>(bytes, static_cast<size_t>(total)));
}

Status ArrayFile::WriteValues(uint64_t first, std::span<const Value> values) {
  MOMENTA_RETURN_IF_ERROR(CheckRange(first, values.size()));
  const size_t size = itemsize();
  std::vector<char> raw(values.size() * size);
  for (size_t k = 0; k < values.size(); ++k) {
    if (!ValueFits(dtype(), values[k]))
      return Status::InvalidArgument(
          path(), "value " + FormatValue(values[k]) + " does not fit dtype " + std::string(DTypeName(dtype())));
    EncodeValue(dtype(), values[k], raw.data() + k * size);
  }
  return WriteRaw(first, values.size(), raw.data());
}

}  // namespace momenta
