#include "storage/log/log_codec.h"

#include <cassert>
#include <cstring>

#include "storage/util/crc32c.h"

namespace momenta {

namespace {

uint32_t HeaderCrc(const LogSegmentHeader& h) { return Crc32c(&h, offsetof(LogSegmentHeader, crc)); }

uint32_t FrameHeaderCrc(const LogFrameHeader& h) { return Crc32c(&h, offsetof(LogFrameHeader, header_crc)); }

}  // namespace

uint64_t LogRawFromValue(DType t, const Value& v) {
  char bytes[8] = {};
  EncodeValue(t, v, bytes);
  uint64_t raw;
  std::memcpy(&raw, bytes, 8);
  return raw;
}

Value LogValueFromRaw(DType t, uint64_t raw) {
  char bytes[8];
  std::memcpy(bytes, &raw, 8);
  return DecodeValue(t, bytes);
}

LogSegmentHeader MakeLogSegmentHeader(uint64_t first_sequence, DType dtype, uint64_t array_tag) {
  LogSegmentHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kLogMagic, sizeof h.magic);
  h.version = kLogVersion;
  h.header_bytes = sizeof(LogSegmentHeader);
  h.first_sequence = first_sequence;
  h.array_tag = array_tag;
  h.dtype_kind = static_cast<uint8_t>(DTypeName(dtype)[0]);
  h.itemsize = static_cast<uint8_t>(DTypeSize(dtype));
  h.crc = HeaderCrc(h);
  return h;
}

Result<LogSegmentHeader> DecodeLogSegmentHeader(std::string_view bytes, const std::string& file) {
  LogSegmentHeader h;
  if (bytes.size() < sizeof h)
    return Status::Corruption(file, "segment header is short (" + std::to_string(bytes.size()) + " of " +
                                        std::to_string(sizeof h) + " bytes)");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kLogMagic, sizeof h.magic) != 0)
    return Status::Corruption(file, "not an update-log segment (bad magic)");
  if (h.crc != HeaderCrc(h)) return Status::Corruption(file, "segment header checksum mismatch");
  if (h.version > kLogVersion)
    return Status::NotSupported(file, "update-log format version " + std::to_string(h.version) +
                                          " is newer than this momenta reads (" + std::to_string(kLogVersion) + ")");
  if (h.version == 0 || h.header_bytes != sizeof h)
    return Status::Corruption(file, "segment header has version " + std::to_string(h.version) + " and size " +
                                        std::to_string(h.header_bytes));
  const char name[3] = {static_cast<char>(h.dtype_kind), static_cast<char>('0' + h.itemsize), 0};
  auto dtype = ParseDTypeName(name);
  if (!dtype.ok() || h.itemsize == 0 || h.itemsize > 8)
    return Status::Corruption(file, "segment header names no known dtype");
  return h;
}

DType LogSegmentDType(const LogSegmentHeader& h) {
  const char name[3] = {static_cast<char>(h.dtype_kind), static_cast<char>('0' + h.itemsize), 0};
  auto dtype = ParseDTypeName(name);
  assert(dtype.ok());
  return dtype.ok() ? *dtype : DType::kF8;
}

void AppendLogFrame(std::span<const LogRecord> records, std::string* out) {
  assert(!records.empty() && records.size() <= kMaxFrameRecords);
  LogFrameHeader h;
  h.count = static_cast<uint32_t>(records.size());
  h.payload_bytes = static_cast<uint32_t>(records.size() * sizeof(LogRecord));
  h.payload_crc = Crc32c(records.data(), h.payload_bytes);
  h.header_crc = FrameHeaderCrc(h);
  out->append(reinterpret_cast<const char*>(&h), sizeof h);
  out->append(reinterpret_cast<const char*>(records.data()), h.payload_bytes);
}

std::optional<LogFrameHeader> DecodeLogFrameHeader(const char* bytes) {
  LogFrameHeader h;
  std::memcpy(&h, bytes, sizeof h);
  if (h.header_crc != FrameHeaderCrc(h)) return std::nullopt;
  if (h.count == 0 || h.count > kMaxFrameRecords) return std::nullopt;
  if (h.payload_bytes != uint64_t{h.count} * sizeof(LogRecord)) return std::nullopt;
  return h;
}

std::string DecodeLogFramePayload(const LogFrameHeader& h, const char* payload, std::vector<LogRecord>* out) {
  if (Crc32c(payload, h.payload_bytes) != h.payload_crc) return "payload checksum mismatch";
  const size_t old_size = out->size();
  out->resize(old_size + h.count);
  std::memcpy(out->data() + old_size, payload, h.payload_bytes);
  const LogRecord* r = out->data() + old_size;
  for (uint32_t k = 1; k < h.count; ++k) {
    if (r[k].sequence != r[0].sequence + k) {
      out->resize(old_size);
      return "sequences in the frame are not consecutive";
    }
  }
  return "";
}

}  // namespace momenta
