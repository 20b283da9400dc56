// The NumPy .npy header: parse and write.
//
//   bytes 0..5   "\x93NUMPY"
//   byte  6, 7   major, minor version (1.0, 2.0 or 3.0)
//   v1:   bytes 8..9   header length H, u16 little-endian; dict at byte 10
//   v2/3: bytes 8..11  header length H, u32 little-endian; dict at byte 12
//   dict: a Python literal {'descr': '<f8', 'fortran_order': False, 'shape': (n,), }
//         padded with spaces, ending in '\n'; data starts right after it.
//   v3 is v2 with a UTF-8 dict (we only ever see ASCII in numeric headers).
//
// Files momenta writes use v1.0 and pad the dict so data starts at byte 4096
// (kMomentaDataOffset): page aligned for mmap and O_DIRECT. Files NumPy writes
// usually have their data at byte 128 (a multiple of 64).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta {

inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};
inline constexpr uint64_t kMomentaDataOffset = 4096;
// Longest header we accept when reading (NumPy's own reader cap is similar).
inline constexpr uint64_t kMaxNpyHeaderBytes = 1 << 20;
// Longest dict text NumPy's reader accepts (max_header_size, characters).
inline constexpr uint64_t kMaxNpyDictChars = 10000;
// Most dimensions a shape may have (NumPy 2 allows 64, NumPy 1 allows 32).
inline constexpr size_t kMaxNpyDims = 64;

struct NpyHeader {
  DType dtype = DType::kF8;
  std::vector<uint64_t> shape;  // () for a 0-d array: one element
  uint64_t data_offset = 0;     // byte where element 0 starts
  int major_version = 1;
  int minor_version = 0;

  // Product of the shape (the flat C-order index space). Overflow is rejected
  // at parse time, so this never wraps.
  uint64_t length() const;
  uint64_t data_bytes() const { return length() * DTypeSize(dtype); }
};

// How many leading bytes of a file ParseNpyHeader needs: call with the first
// 12 bytes; returns the total header size (data offset), or an error when the
// magic or version is wrong. `file` names the file in messages.
Result<uint64_t> NpyHeaderSize(std::span<const char> first12, const std::string& file);

// Parses a complete header (the file's bytes [0, data_offset); bytes past the
// header, if the span holds more, are ignored) and accepts exactly what
// NumPy's reader (numpy.lib.format, NumPy 1.24 on Python 3.11) accepts:
// the dict is a Python literal read as ast.literal_eval reads it (see
// storage/npy/py_literal.h: any quotes, spacing, comments, trailing commas,
// Python 2 "L" suffixes in versions 1.0 and 2.0, a key given twice keeping
// its last value), text of at most kMaxNpyDictChars characters (latin-1 in
// 1.0/2.0, UTF-8 in 3.0), keys exactly 'descr', 'fortran_order' and 'shape',
// shape a tuple of non-negative ints (not True or False: np.load refuses them),
// fortran_order True or False. Refused besides, where NumPy would read
// them (the documented exceptions; each a one-line NotSupported message):
// descrs other than the plain spellings of momenta's dtypes (NpyDescrDType),
// big-endian dtypes, fortran_order True. Every refusal names `file`; a shape
// whose byte size reaches 2^63 is Corruption.
Result<NpyHeader> ParseNpyHeader(std::span<const char> header, const std::string& file);

// The dtype a descr string names when it is one of the plain spellings
// numpy.dtype() reads as a dtype momenta stores: a type code with its size or
// a one-letter code ("f8", "d", "l", "B", ...), with an optional byte order
// '<', '=', '|' (or '>' for one-byte types), or a type name ("float64",
// "int", "uint8", ...). nullopt for anything else.
std::optional<DType> NpyDescrDType(std::string_view descr);

// OK when an array of `shape` and `dtype` can live in a file: at most
// kMaxNpyDims dimensions, each below 2^63, and element count and byte size
// (plus a header of up to kMaxNpyHeaderBytes) below 2^63. Otherwise
// InvalidArgument naming `file`, e.g. "shape (4294967296, 4294967296) of f8
// is too large (2^63 bytes or more)". ParseNpyHeader applies the same rule
// (as Corruption).
Status ValidateNpyShape(DType dtype, std::span<const uint64_t> shape, const std::string& file);

// The header bytes for a C-order array of `shape` and `dtype`, padded with
// spaces so that the data starts at `data_offset` (default 4096).
// REQUIRES: data_offset is a multiple of 64, at most 65536 (a v1.0 header)
// and large enough for the dict; ValidateNpyShape(dtype, shape) is OK (then
// 4096 is always large enough).
std::string EncodeNpyHeader(DType dtype, std::span<const uint64_t> shape, uint64_t data_offset = kMomentaDataOffset);

// The smallest multiple of 64 that holds the v1.0 header of `shape` (at most
// about 1.5 KiB). Used for empty arrays: numpy.load(mmap_mode='r') cannot map
// a zero-length array whose data offset is a multiple of the page size.
// REQUIRES: ValidateNpyShape(dtype, shape) is OK.
uint64_t NpyMinDataOffset(DType dtype, std::span<const uint64_t> shape);

}  // namespace momenta
