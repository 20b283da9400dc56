// How the driver's report writes numbers: byte counts with a binary unit,
// seconds as milliseconds, one value through a printf format.
#pragma once

#include <string>

namespace momenta::moments_driver {

// "512 B", "68.8 KiB", "12.5 MiB", "10.0 GiB": the unit switches at 10 of it.
std::string Bytes(double bytes);
// snprintf(format, value) for a format with one double conversion.
std::string Fmt(const char* format, double value);
// "0.183 ms" below 10 ms, else "410.2 ms".
std::string Ms(double seconds);

}  // namespace momenta::moments_driver
