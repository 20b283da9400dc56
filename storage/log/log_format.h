// The update log's on-disk layout, version 1 (storage/ON_DISK.md has the prose).
// Folder "<array>.momenta/log/": segments "<first sequence, 20 decimal digits>.log",
// and the high-water mark "high-water" (its layout: storage/log/log_mark.h).
// All integers little-endian; every crc is CRC32C (storage/util/crc32c.h).
//
//   segment header, 64 bytes         frame header, 16 bytes        record, 40 bytes
//   0  8  magic "MOMLOG\0\0"          0  4  payload bytes = 40*count  0  8  sequence u64
//   8  4  version 1                   4  4  record count 1..65536    8  8  time i64 (ms)
//   12 4  header bytes 64             8  4  crc of the payload       16 8  index u64
//   16 8  first sequence              12 4  crc of bytes [0, 12)     24 8  old value
//   24 8  array tag (caller's, 0)                                    32 8  new value
//   32 1  dtype kind 'f' 'i' 'u'     A segment: header, then frames back to back; a frame
//   33 1  itemsize 1 2 4 8           is its header, then `count` records with consecutive
//   34 26 zero                       sequences. Values: the element's little-endian bytes,
//   60 4  crc of bytes [0, 60)       zero-padded to 8.
#pragma once

#include <cstdint>

namespace momenta {

inline constexpr char kLogMagic[8] = {'M', 'O', 'M', 'L', 'O', 'G', '\0', '\0'};
inline constexpr uint32_t kLogVersion = 1;
inline constexpr uint32_t kMaxFrameRecords = 65536;  // larger appends span several frames
inline constexpr int64_t kLogTimeNow = INT64_MIN;    // LogRecord::time: "stamp with wall clock"

struct LogSegmentHeader {
  char magic[8];
  uint32_t version, header_bytes;
  uint64_t first_sequence, array_tag;
  uint8_t dtype_kind, itemsize, zero[26];
  uint32_t crc;
};
static_assert(sizeof(LogSegmentHeader) == 8 + 4 + 4 + 8 + 8 + 1 + 1 + 26 + 4);

struct LogFrameHeader {
  uint32_t payload_bytes, count, payload_crc, header_crc;
};
static_assert(sizeof(LogFrameHeader) == 4 + 4 + 4 + 4);

// One update, exactly as stored. Values are raw element bytes (see log_codec.h).
struct LogRecord {
  uint64_t sequence = 0;       // assigned by LogWriter::Append
  int64_t time = kLogTimeNow;  // ms since the Unix epoch unless the caller chose its own clock
  uint64_t index = 0;          // flat element index
  uint64_t old_raw = 0;
  uint64_t new_raw = 0;
  bool operator==(const LogRecord&) const = default;
};
static_assert(sizeof(LogRecord) == 8 + 8 + 8 + 8 + 8);

}  // namespace momenta
