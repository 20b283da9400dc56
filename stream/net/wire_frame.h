// Wire frames between a site and its root: a fixed 20-byte header and a
// checksummed payload. Every frame is checked before its payload is looked at.
//
//   offset  size  field
//   0       1     magic 0xB5 (not ASCII: a query line never starts with it)
//   1       1     magic 'm'
//   2       1     protocol version (kWireVersion)
//   3       1     type (FrameType)
//   4       4     payload length, little-endian (<= the reader's cap)
//   8       4     sequence, little-endian: 0 for a connection's first frame in
//                 each direction, +1 for every frame after it
//   12      4     crc32c of the payload, little-endian
//   16      4     crc32c of bytes 0..15, little-endian (the header's own check)
//   20      n     payload (handshake.h, wire_batch.h)
//
// Version 2 (version 1 had a 12-byte header, one crc over header and payload
// and no sequence). The header's own checksum means a damaged length is
// known as soon as the 20 header bytes are in, not after waiting for a
// payload that never comes; the sequence means a frame delivered twice is
// known and applied once, and a frame lost is known and never papered over.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

inline constexpr uint8_t kWireMagic0 = 0xB5, kWireMagic1 = 'm';
inline constexpr uint8_t kWireVersion = 2;
inline constexpr size_t kFrameHeaderBytes = 20;
static_assert(kFrameHeaderBytes == 1 + 1 + 1 + 1 + 4 + 4 + 4 + 4,
              "header = magic, version, type, length, sequence, payload crc, header crc");
// The default cap on a payload: far above any honest frame (a snapshot of a
// site at eps = 0.001 is ~100 KiB), small enough to bound a peer's memory.
inline constexpr uint32_t kDefaultMaxPayload = 4u << 20;
// The cap before a peer is known (its HELLO: two strings of at most 256
// bytes and the parameters fit in ~600 bytes), so a peer with no token
// cannot make the root hold more than this for it.
inline constexpr uint32_t kMaxHandshakePayload = 1024;

enum class FrameType : uint8_t {
  kHello = 1,     // site -> root: version, name, token, parameters it runs
  kWelcome = 2,   // root -> site: the parameters, the site's slot
  kReject = 3,    // root -> site: why the connection closes
  kSnapshot = 4,  // site -> root: the site's whole state, replacing the root's
  kBatch = 5,     // site -> root: the site's clock and the messages since
  kFinal = 6,     // site -> root (protocol 3): its input ended; the drain, then nothing more
  kNames = 7,     // site -> root (protocol 4): names of items counted by hash (name_frames.h)
};
inline constexpr uint8_t kMaxFrameType = 7;

struct Frame {
  FrameType type = FrameType::kBatch;
  uint32_t sequence = 0;
  std::string payload;
};

// One frame, whole. `sequence` is the frame's place on its connection.
std::string EncodeFrame(FrameType type, std::string_view payload, uint32_t sequence = 0);
// A header alone, with any length and payload crc (tests forge headers
// with it; EncodeFrame uses it).
std::string EncodeFrameHeader(FrameType type, uint32_t length, uint32_t sequence, uint32_t payload_crc);

// Numbers the frames one end sends on one connection: 0, 1, 2, ...
class FrameWriter {
 public:
  std::string Encode(FrameType type, std::string_view payload) { return EncodeFrame(type, payload, next_++); }
  uint32_t next() const { return next_; }

 private:
  uint32_t next_ = 0;  // the sequence of the next frame
};

// Takes bytes as they come off a socket and cuts them into frames, in
// sequence. A frame whose sequence was already delivered (sent twice) is
// dropped and counted, never returned again. An error is final: the
// connection must close (the reader keeps returning it).
class FrameReader {
 public:
  FrameReader(std::string peer, uint32_t max_payload) : peer_(std::move(peer)), max_payload_(max_payload) {}

  void Append(const char* data, size_t n) { buf_.append(data, n); }
  // True and *frame set when the next whole frame is buffered; false when
  // more bytes are needed; Corruption ("<peer>: bad frame magic", "... frame
  // header checksum mismatch", "... frame checksum mismatch", "... frame of
  // N bytes over the cap of M", "... unsupported protocol version V", "...
  // frame N out of sequence, expected M (frames lost)") otherwise.
  Result<bool> Next(Frame* frame);
  // Frames after the handshake may be larger than the HELLO: the root raises
  // the cap once it knows the peer. Applies to the frame not yet read.
  void set_max_payload(uint32_t max_payload) { max_payload_ = max_payload; }
  // Bytes held (at most one header plus one capped payload beyond a frame).
  size_t buffered() const { return buf_.size() - pos_; }
  // Frames dropped because their sequence had been delivered already.
  uint64_t duplicates() const { return duplicates_; }

 private:
  Status Fail(const std::string& what);
  const std::string peer_;
  uint32_t max_payload_;
  std::string buf_;
  size_t pos_ = 0;
  uint32_t expected_ = 0;  // the sequence of the next frame to deliver
  uint64_t duplicates_ = 0;
  Status error_;
};

}  // namespace momenta
