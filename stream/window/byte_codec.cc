#include "stream/window/byte_codec.h"

namespace momenta {

int VarintBytes(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

int EliasGammaBits(uint64_t v) { return v == 0 ? 1 : 2 * (63 - __builtin_clzll(v)) + 1; }

void ByteWriter::Varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

Status ByteReader::Bad(std::string_view what) const {
  return Status::Corruption(context_, std::string(what) + " at byte " + std::to_string(pos_));
}

Status ByteReader::Fixed(void* p, size_t n) {
  if (in_.size() - pos_ < n) return Bad("truncated");
  std::memcpy(p, in_.data() + pos_, n);
  pos_ += n;
  return Status::OK();
}

Status ByteReader::Varint(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= in_.size()) return Bad("truncated varint");
    const uint8_t b = static_cast<uint8_t>(in_[pos_++]);
    if (shift == 63 && b > 1) return Bad("varint overflows 64 bits");
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = result;
      return Status::OK();
    }
  }
  return Bad("varint longer than 10 bytes");
}

Status ByteReader::Signed(int64_t* v) {
  uint64_t u = 0;
  MOMENTA_RETURN_IF_ERROR(Varint(&u));
  *v = UnZigZag(u);
  return Status::OK();
}

Status ByteReader::Expect(std::string_view bytes) {
  if (in_.size() - pos_ < bytes.size() || in_.substr(pos_, bytes.size()) != bytes) return Bad("bad magic");
  pos_ += bytes.size();
  return Status::OK();
}

Status ByteReader::Count(uint64_t* n, size_t min_element_bytes) {
  MOMENTA_RETURN_IF_ERROR(Varint(n));
  if (min_element_bytes > 0 && *n > remaining() / min_element_bytes)
    return Bad("count " + std::to_string(*n) + " larger than the input can hold");
  return Status::OK();
}

Status ByteReader::Bytes(size_t n, std::string_view* out) {
  if (remaining() < n) return Bad("truncated");
  *out = in_.substr(pos_, n);
  pos_ += n;
  return Status::OK();
}

Status ByteReader::Finish() const {
  if (!done()) return Bad(std::to_string(remaining()) + " trailing bytes");
  return Status::OK();
}

}  // namespace momenta
