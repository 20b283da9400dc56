// Wire frames between a site and its root: a fixed 12-byte header and a
// checksummed payload. Every frame is checked before its payload is looked at.
//
//   offset  size  field
//   0       1     magic 0xB5 (not ASCII: a query line never starts with it)
//   1       1     magic 'm'
//   2       1     protocol version (kWireVersion)
//   3       1     type (FrameType)
//   4       4     payload length, little-endian (<= the reader's cap)
//   8       4     crc32c of bytes 0..7 and the payload, little-endian
//   12      n     payload (handshake.h, wire_batch.h)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/status.h"

namespace momenta {

inline constexpr uint8_t kWireMagic0 = 0xB5, kWireMagic1 = 'm';
inline constexpr uint8_t kWireVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 12;
static_assert(kFrameHeaderBytes == 1 + 1 + 1 + 1 + 4 + 4, "header = magic, version, type, length, crc");
// The default cap on a payload: far above any honest frame (a snapshot of a
// site at eps = 0.001 is ~100 KiB), small enough to bound a peer's memory.
inline constexpr uint32_t kDefaultMaxPayload = 4u << 20;

enum class FrameType : uint8_t {
  kHello = 1,     // site -> root: version, name, token, parameters it runs
  kWelcome = 2,   // root -> site: the parameters, the site's slot
  kReject = 3,    // root -> site: why the connection closes
  kSnapshot = 4,  // site -> root: the site's whole state, replacing the root's
  kBatch = 5,     // site -> root: the site's clock and the messages since
};
inline constexpr uint8_t kMaxFrameType = 5;

struct Frame {
  FrameType type = FrameType::kBatch;
  std::string payload;
};

std::string EncodeFrame(FrameType type, std::string_view payload);

// Takes bytes as they come off a socket and cuts them into frames. An error
// is final: the connection must close (the reader keeps returning it).
class FrameReader {
 public:
  FrameReader(std::string peer, uint32_t max_payload) : peer_(std::move(peer)), max_payload_(max_payload) {}

  void Append(const char* data, size_t n) { buf_.append(data, n); }
  // True and *frame set when a whole frame is buffered; false when more bytes
  // are needed; Corruption ("<peer>: bad frame magic", "... checksum
  // mismatch", "... frame of N bytes over the cap of M", "... unsupported
  // protocol version V") otherwise.
  Result<bool> Next(Frame* frame);
  // Bytes held (at most one header plus one capped payload beyond a frame).
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  Status Fail(const std::string& what);
  const std::string peer_;
  const uint32_t max_payload_;
  std::string buf_;
  size_t pos_ = 0;
  Status error_;
};

}  // namespace momenta
