// The element types momenta stores: NumPy's plain little-endian numeric dtypes.
// Conversions between text, double and the on-disk bytes, with range checks:
// a value that does not fit (300 into u1, 1.5 or NaN into an integer dtype) is
// an error, never a silent wrap or truncation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"
#include "storage/util/value.h"

namespace momenta {

enum class DType : uint8_t { kF8, kF4, kI8, kI4, kI2, kI1, kU8, kU4, kU2, kU1 };

size_t DTypeSize(DType t);
bool DTypeIsInteger(DType t);
bool DTypeIsSigned(DType t);  // true for all floating types too
// "f8", "i2", "u1", ...
std::string_view DTypeName(DType t);
// The NumPy descr momenta writes: "<f8", "<i2", "|u1" (NumPy uses '|' for one byte).
std::string DTypeDescr(DType t);
// Accepts "f8", "float64", "i4", "int32", "u1", "uint8", ... (case-sensitive, as NumPy).
Result<DType> ParseDTypeName(std::string_view name);

// Parses `text` as a value of dtype `t`, checking that it fits exactly:
// integer dtypes take integer literals (and floating literals with an exact
// integral value, e.g. "3.0", "1e3"), reject NaN, infinities, fractions and
// out-of-range values; f4 rejects finite values beyond float's range.
// The error reads "Invalid argument: value '300' does not fit dtype u1".
// Details: leading/trailing ASCII whitespace is ignored; integer dtypes read
// decimal text exactly (never through a double), over the full i8/u8 range;
// float dtypes take anything strtod takes in the C locale (also "nan", "inf",
// hex floats), round to nearest, and reject only finite text that rounds to
// infinity (f8: beyond DBL_MAX, f4: beyond FLT_MAX). The result is canonical:
// kInt for i*, kUInt for u*, kFloat for f* (an f4 holds the rounded float).
Result<Value> ParseValue(DType t, std::string_view text);
// Same checks for a double (e.g. from a CSV import or an f8 source array).
Result<Value> ValueFromDouble(DType t, double v);
// True when `v` (of any kind) is exactly representable in `t`; f4 and f8
// take every float and any integer (rounded), but not finite doubles that
// overflow float.
bool ValueFits(DType t, const Value& v);

// Bytes <-> values. `bytes` points to DTypeSize(t) bytes, little-endian.
void EncodeValue(DType t, const Value& v, char* bytes);  // REQUIRES: v fits t
Value DecodeValue(DType t, const char* bytes);
double DecodeDouble(DType t, const char* bytes);
// DecodeDouble over `count` consecutive elements; out holds `count` doubles.
void DecodeDoubles(DType t, const char* bytes, size_t count, double* out);
// Shortest text that parses back to the same value ("0.1", "300", "-7").
// Every NaN prints as "nan", infinities as "inf" / "-inf".
std::string FormatValue(const Value& v);
// As above, but an f4 value prints as the shortest text that parses back to
// the same float ("0.1" rather than "0.10000000149011612").
std::string FormatValue(DType t, const Value& v);

}  // namespace momenta
