// Bytes <-> structs for the update log (layout: storage/log/log_format.h). Pure
// functions: no I/O, no allocation beyond the caller's output. Decoders check
// every length, field and crc before trusting a byte.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/log/log_format.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

// An element value as stored in a record: its little-endian bytes zero-padded
// to 8. REQUIRES: ValueFits(t, v)
uint64_t LogRawFromValue(DType t, const Value& v);
// REQUIRES: raw came from a record of dtype t (bytes past the itemsize are ignored)
Value LogValueFromRaw(DType t, uint64_t raw);

// A complete header (crc filled) for a segment whose first record is `first_sequence`.
LogSegmentHeader MakeLogSegmentHeader(uint64_t first_sequence, DType dtype, uint64_t array_tag);

// Parses the first sizeof(LogSegmentHeader) bytes of a segment. Errors name
// `file`: Corruption for a short, foreign or damaged header; NotSupported for
// a version newer than kLogVersion.
Result<LogSegmentHeader> DecodeLogSegmentHeader(std::string_view bytes, const std::string& file);
// REQUIRES: h came from MakeLogSegmentHeader or DecodeLogSegmentHeader
DType LogSegmentDType(const LogSegmentHeader& h);

// Appends one frame holding `records` (sequences must be consecutive) to *out.
// REQUIRES: 1 <= records.size() <= kMaxFrameRecords
void AppendLogFrame(std::span<const LogRecord> records, std::string* out);
inline uint64_t LogFrameBytes(uint64_t count) { return sizeof(LogFrameHeader) + count * sizeof(LogRecord); }

// A frame header whose crc and fields check (1 <= count <= kMaxFrameRecords,
// payload_bytes == count * sizeof(LogRecord)); nullopt otherwise.
// `bytes` holds at least sizeof(LogFrameHeader) bytes.
std::optional<LogFrameHeader> DecodeLogFrameHeader(const char* bytes);

// Checks a payload against its header: crc, then sequences consecutive. On
// success appends the records to *out and returns ""; else returns the problem
// in a few words ("payload checksum mismatch"). Where the frame's sequences
// stand against the records read before it is the scanner's business, not the
// frame's: a whole frame is valid wherever it lies. `payload` holds
// h.payload_bytes bytes.
std::string DecodeLogFramePayload(const LogFrameHeader& h, const char* payload, std::vector<LogRecord>* out);

}  // namespace momenta
