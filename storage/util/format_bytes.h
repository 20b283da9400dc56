// Byte counts as people read them, in binary units: one formatter for every
// layer's messages ("16.0 TiB", "512 B").
#pragma once

#include <cstdint>
#include <string>

namespace momenta {

// "512 B" below 1 KiB (exact), else one decimal and the largest binary unit
// that keeps the value >= 1: "1.5 KiB", "16.0 TiB", up to EiB.
std::string FormatBytes(uint64_t bytes);

}  // namespace momenta
