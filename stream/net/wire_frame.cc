#include "stream/net/wire_frame.h"

#include <cstring>

#include "storage/util/crc32c.h"

namespace momenta {

namespace {
void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
}  // namespace

std::string EncodeFrameHeader(FrameType type, uint32_t length, uint32_t sequence, uint32_t payload_crc) {
  std::string out(kFrameHeaderBytes, '\0');
  out[0] = static_cast<char>(kWireMagic0);
  out[1] = static_cast<char>(kWireMagic1);
  out[2] = static_cast<char>(kWireVersion);
  out[3] = static_cast<char>(type);
  PutU32(&out[4], length);
  PutU32(&out[8], sequence);
  PutU32(&out[12], payload_crc);
  PutU32(&out[16], Crc32c(out.data(), 16));
  return out;
}

std::string EncodeFrame(FrameType type, std::string_view payload, uint32_t sequence) {
  std::string out =
      EncodeFrameHeader(type, static_cast<uint32_t>(payload.size()), sequence, Crc32c(payload.data(), payload.size()));
  out.append(payload);
  return out;
}

Status FrameReader::Fail(const std::string& what) {
  error_ = Status::Corruption(peer_, what);
  return error_;
}

Result<bool> FrameReader::Next(Frame* frame) {
  while (true) {
    if (!error_.ok()) return error_;
    const size_t have = buf_.size() - pos_;
    const char* h = buf_.data() + pos_;
    // Check what is there as early as possible: a wrong magic or version is
    // known from the first bytes, a damaged or oversized length from the
    // header, before any of the payload it announces.
    if (have >= 1 && static_cast<uint8_t>(h[0]) != kWireMagic0) return Fail("bad frame magic");
    if (have >= 2 && static_cast<uint8_t>(h[1]) != kWireMagic1) return Fail("bad frame magic");
    if (have >= 3 && static_cast<uint8_t>(h[2]) != kWireVersion)
      return Fail("unsupported protocol version " + std::to_string(static_cast<uint8_t>(h[2])) + " (this end speaks " +
                  std::to_string(kWireVersion) + ")");
    if (have >= 4 && (h[3] < 1 || static_cast<uint8_t>(h[3]) > kMaxFrameType))
      return Fail("unknown frame type " + std::to_string(static_cast<uint8_t>(h[3])));
    if (have < kFrameHeaderBytes) return false;
    if (Crc32c(h, 16) != GetU32(h + 16)) return Fail("frame header checksum mismatch");
    const uint32_t length = GetU32(h + 4);
    if (length > max_payload_)
      return Fail("frame of " + std::to_string(length) + " bytes over the cap of " + std::to_string(max_payload_));
    if (have < kFrameHeaderBytes + length) return false;
    if (Crc32c(h + kFrameHeaderBytes, length) != GetU32(h + 12)) return Fail("frame checksum mismatch");
    const uint32_t sequence = GetU32(h + 8);
    // Serial-number order (RFC 1982), so the sequence may wrap.
    const auto ahead = static_cast<int32_t>(sequence - expected_);
    if (ahead > 0)
      return Fail("frame " + std::to_string(sequence) + " out of sequence, expected " + std::to_string(expected_) +
                  " (frames lost)");
    const bool duplicate = ahead < 0;
    if (!duplicate) {
      frame->type = static_cast<FrameType>(h[3]);
      frame->sequence = sequence;
      frame->payload.assign(h + kFrameHeaderBytes, length);
      ++expected_;
    } else {
      ++duplicates_;
    }
    pos_ += kFrameHeaderBytes + length;
    if (pos_ == buf_.size()) {
      buf_.clear();
      pos_ = 0;
    } else if (pos_ > (1u << 16)) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    // A buffer grown for a large frame does not stay that large while idle.
    if (buf_.empty() && buf_.capacity() > (1u << 16)) std::string().swap(buf_);
    if (!duplicate) return true;
  }
}

}  // namespace momenta
