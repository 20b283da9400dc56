// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected): the checksum of the
// update log's frames. Uses the SSE4.2 crc32 instruction when the CPU has it
// (checked once at run time), else a slicing-by-8 table. Both give the same
// value; the standard check value is Crc32c("123456789") == 0xE3069283.
// Thread-safe, no allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace momenta {

// The CRC32C of data[0, n).
uint32_t Crc32c(const void* data, size_t n);

// Continues `crc` (a previous result) over data[0, n):
// Crc32cExtend(Crc32c(a, i), a + i, n - i) == Crc32c(a, n).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);

// Exposed for tests and benchmarks: each implementation on its own.
uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t n);
// REQUIRES: Crc32cHardwareAvailable()
uint32_t Crc32cExtendHardware(uint32_t crc, const void* data, size_t n);
bool Crc32cHardwareAvailable();

}  // namespace momenta
