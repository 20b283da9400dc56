// Fuzz target `npy`: the .npy header parser (storage/npy/npy_format.h).
//
// Input: the first bytes of a file. Properties checked on every input:
//   - NpyHeaderSize and ParseNpyHeader never crash and fail with a message
//     naming the file;
//   - an accepted header is self-consistent: its data offset lies within
//     the bytes parsed, ValidateNpyShape accepts its shape, and
//     length() * element size does not wrap;
//   - it round-trips: EncodeNpyHeader of the parsed dtype and shape parses
//     back to the same dtype and shape.
#include <cstdint>
#include <span>
#include <string>

#include "storage/npy/npy_format.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

const std::string kFile = "fuzz.npy";

bool NamesTheFile(const momenta::Status& s) { return s.ToString().find(kFile) != std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace momenta;
  const std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  if (size >= 12) {
    auto header_size = NpyHeaderSize(bytes.first(12), kFile);
    if (!header_size.ok()) FUZZ_CHECK(NamesTheFile(header_size.status()), header_size.status().ToString().c_str());
  }
  auto header = ParseNpyHeader(bytes, kFile);
  if (!header.ok()) {
    FUZZ_CHECK(NamesTheFile(header.status()), header.status().ToString().c_str());
    return 0;
  }
  const NpyHeader& h = header.value();
  FUZZ_CHECK(h.data_offset <= size, "data offset beyond the bytes parsed");
  FUZZ_CHECK(ValidateNpyShape(h.dtype, h.shape, kFile).ok(), "accepted a shape ValidateNpyShape refuses");
  const uint64_t length = h.length();
  FUZZ_CHECK(length == 0 || h.data_bytes() / length == DTypeSize(h.dtype), "data_bytes wraps");

  const std::string again = EncodeNpyHeader(h.dtype, h.shape);
  auto reparsed = ParseNpyHeader(std::span<const char>(again.data(), again.size()), kFile);
  FUZZ_CHECK(reparsed.ok(), reparsed.status().ToString().c_str());
  FUZZ_CHECK(reparsed.value().dtype == h.dtype, "round trip changed the dtype");
  FUZZ_CHECK(reparsed.value().shape == h.shape, "round trip changed the shape");
  return 0;
}
