// ByteWriter / ByteReader: the little binary vocabulary of stream/'s encodings
// (synopses' Encode/Decode and protocol messages): LEB128 varints, zig-zag
// signed varints, little-endian fixed-width integers and doubles.
//
// ByteReader checks every length before it reads: a short or malformed input
// yields Corruption ("Corruption: <context>: truncated at byte 17"), never a
// read past the end. Values that decode but are out of range for the caller
// are the caller's to check (Expect* helpers).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

inline uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t UnZigZag(uint64_t u) { return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1); }
// Bytes of the LEB128 varint of v (1..10).
int VarintBytes(uint64_t v);
// Bits of the Elias-gamma code of v >= 1: 2*floor(log2 v) + 1.
int EliasGammaBits(uint64_t v);

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Fixed(&v, 4); }
  void U64(uint64_t v) { Fixed(&v, 8); }
  void F64(double v) { Fixed(&v, 8); }
  void Varint(uint64_t v);
  void Signed(int64_t v) { Varint(ZigZag(v)); }
  void Bytes(std::string_view b) { out_.append(b); }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }
  size_t size() const { return out_.size(); }

 private:
  void Fixed(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(std::string_view in, std::string context) : in_(in), context_(std::move(context)) {}

  Status U8(uint8_t* v) { return Fixed(v, 1); }
  Status U32(uint32_t* v) { return Fixed(v, 4); }
  Status U64(uint64_t* v) { return Fixed(v, 8); }
  Status F64(double* v) { return Fixed(v, 8); }
  Status Varint(uint64_t* v);
  Status Signed(int64_t* v);
  // Checks that `bytes` exactly match the next bytes (a magic string).
  Status Expect(std::string_view bytes);
  // A count of elements that follow, each at least `min_element_bytes` long:
  // Corruption when the rest of the input cannot hold them (so a corrupt
  // count cannot make the caller allocate gigabytes).
  Status Count(uint64_t* n, size_t min_element_bytes);
  // The next n bytes, viewed in place (valid while the input is).
  Status Bytes(size_t n, std::string_view* out);

  size_t offset() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }
  bool done() const { return pos_ == in_.size(); }
  // Corruption "<context>: <what>" at the current offset.
  Status Bad(std::string_view what) const;
  // OK when every byte was consumed, else Corruption (trailing bytes).
  Status Finish() const;

 private:
  Status Fixed(void* p, size_t n);
  std::string_view in_;
  std::string context_;
  size_t pos_ = 0;
};

}  // namespace momenta
