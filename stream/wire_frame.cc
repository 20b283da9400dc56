#include "stream/wire_frame.h"

#include <cstring>

#include "storage/crc32c.h"

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

std::string EncodeFrame(FrameType type, std::string_view payload) {
  std::string out(kFrameHeaderBytes, '\0');
  out[0] = static_cast<char>(kWireMagic0);
  out[1] = static_cast<char>(kWireMagic1);
  out[2] = static_cast<char>(kWireVersion);
  out[3] = static_cast<char>(type);
  PutU32(&out[4], static_cast<uint32_t>(payload.size()));
  const uint32_t crc = Crc32cExtend(Crc32c(out.data(), 8), payload.data(), payload.size());
  PutU32(&out[8], crc);
  out.append(payload);
  return out;
}

Status FrameReader::Fail(const std::string& what) {
  error_ = Status::Corruption(peer_, what);
  return error_;
}

Result<bool> FrameReader::Next(Frame* frame) {
  if (!error_.ok()) return error_;
  const size_t have = buf_.size() - pos_;
  const char* h = buf_.data() + pos_;
  // Check what is there as early as possible: a wrong magic or version is
  // known from the first bytes, an oversized length from the first eight.
  if (have >= 1 && static_cast<uint8_t>(h[0]) != kWireMagic0) return Fail("bad frame magic");
  if (have >= 2 && static_cast<uint8_t>(h[1]) != kWireMagic1) return Fail("bad frame magic");
  if (have >= 3 && static_cast<uint8_t>(h[2]) != kWireVersion)
    return Fail("unsupported protocol version " + std::to_string(static_cast<uint8_t>(h[2])) + " (this end speaks " +
                std::to_string(kWireVersion) + ")");
  if (have >= 4 && (h[3] < 1 || static_cast<uint8_t>(h[3]) > kMaxFrameType))
    return Fail("unknown frame type " + std::to_string(static_cast<uint8_t>(h[3])));
  if (have < kFrameHeaderBytes) return false;
  const uint32_t length = GetU32(h + 4);
  if (length > max_payload_)
    return Fail("frame of " + std::to_string(length) + " bytes over the cap of " + std::to_string(max_payload_));
  if (have < kFrameHeaderBytes + length) return false;
  const uint32_t crc = Crc32cExtend(Crc32c(h, 8), h + kFrameHeaderBytes, length);
  if (crc != GetU32(h + 8)) return Fail("frame checksum mismatch");
  frame->type = static_cast<FrameType>(h[3]);
  frame->payload.assign(h + kFrameHeaderBytes, length);
  pos_ += kFrameHeaderBytes + length;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > (1u << 16)) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return true;
}

}  // namespace momenta
