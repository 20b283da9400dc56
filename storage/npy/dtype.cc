#include "storage/npy/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "storage/util/parse_number.h"

namespace momenta {

// Element bytes are copied straight to and from native integers and floats.
static_assert(std::endian::native == std::endian::little,
              "momenta reads and writes little-endian .npy data with plain memcpy");
static_assert(std::numeric_limits<double>::is_iec559 && std::numeric_limits<float>::is_iec559);

namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;       // "f8"
  std::string_view long_name;  // "float64"
  size_t size;
  bool is_integer;
  bool is_signed;  // true for floats too
};

// Indexed by the enum's value.
constexpr std::array<DTypeInfo, 10> kInfos{{
    {DType::kF8, "f8", "float64", 8, false, true},
    {DType::kF4, "f4", "float32", 4, false, true},
    {DType::kI8, "i8", "int64", 8, true, true},
    {DType::kI4, "i4", "int32", 4, true, true},
    {DType::kI2, "i2", "int16", 2, true, true},
    {DType::kI1, "i1", "int8", 1, true, true},
    {DType::kU8, "u8", "uint64", 8, true, false},
    {DType::kU4, "u4", "uint32", 4, true, false},
    {DType::kU2, "u2", "uint16", 2, true, false},
    {DType::kU1, "u1", "uint8", 1, true, false},
}};

const DTypeInfo& Info(DType t) {
  const auto i = static_cast<size_t>(t);
  assert(i < kInfos.size() && kInfos[i].type == t);
  return kInfos[i];
}

// Largest magnitude of a negative value of a signed integer dtype (2^(8n-1)),
// and the largest value of any integer dtype, as exact uint64s.
uint64_t NegLimit(DType t) { return uint64_t{1} << (8 * DTypeSize(t) - 1); }
uint64_t PosLimit(DType t) {
  const unsigned bits = 8 * static_cast<unsigned>(DTypeSize(t));
  if (!DTypeIsSigned(t)) return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return (uint64_t{1} << (bits - 1)) - 1;
}

// The value text as it appears inside a one-line message: at most 40
// characters, control bytes shown as '?'.
std::string Quote(std::string_view text) {
  std::string out;
  const size_t n = std::min<size_t>(text.size(), 40);
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
  }
  if (text.size() > n) out += "...";
  return "'" + out + "'";
}

Status DoesNotFit(DType t, std::string_view text, std::string_view why = {}) {
  std::string msg = "value " + Quote(text) + " does not fit dtype " + std::string(DTypeName(t));
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  return Status::InvalidArgument("", msg);
}

Status NotANumber(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("", "empty value is not a number");
  return Status::InvalidArgument("", Quote(text) + " is not a number");
}

std::string_view TrimSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// An integer magnitude with its sign, checked against t's range.
Result<Value> IntegerValue(DType t, bool negative, uint64_t magnitude, std::string_view text) {
  if (negative && magnitude != 0) {
    if (!DTypeIsSigned(t) || magnitude > NegLimit(t)) return DoesNotFit(t, text);
    // -magnitude as int64, valid also for magnitude == 2^63.
    return Value::Int(static_cast<int64_t>(~magnitude + 1));
  }
  if (magnitude > PosLimit(t)) return DoesNotFit(t, text);
  if (DTypeIsSigned(t)) return Value::Int(static_cast<int64_t>(magnitude));
  return Value::UInt(magnitude);
}

// A decimal literal  [+-] digits [. digits] [(e|E) [+-] digits]  with at
// least one mantissa digit, split into its parts (no value computed yet).
struct Decimal {
  bool negative = false;
  std::string_view int_digits, frac_digits;
  // Saturated at +-1e12, far beyond any digit count a text can have, so the
  // saturation never changes whether the value is integral or in range.
  int64_t exponent = 0;
};

bool ScanDecimal(std::string_view s, Decimal* d) {
  size_t i = 0;
  auto digits = [&]() {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return s.substr(start, i - start);
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) d->negative = s[i++] == '-';
  d->int_digits = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    d->frac_digits = digits();
  }
  if (d->int_digits.empty() && d->frac_digits.empty()) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    const std::string_view e = digits();
    if (e.empty()) return false;
    int64_t v = 0;
    for (char c : e) v = std::min<int64_t>(v * 10 + (c - '0'), 1'000'000'000'000);
    d->exponent = exp_negative ? -v : v;
  }
  return i == s.size();
}

// The exact integer a decimal literal denotes, or why it is not one.
Result<Value> IntegerFromDecimal(DType t, const Decimal& d, std::string_view text) {
  // value = digits * 10^scale, digits without leading or trailing zeros.
  std::string digits;
  digits.reserve(d.int_digits.size() + d.frac_digits.size());
  digits.append(d.int_digits).append(d.frac_digits);
  int64_t scale = d.exponent - static_cast<int64_t>(d.frac_digits.size());
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return IntegerValue(t, false, 0, text);  // "0", "-0.0e5"
  const size_t last = digits.find_last_not_of('0');
  scale += static_cast<int64_t>(digits.size() - 1 - last);
  digits = digits.substr(first, last - first + 1);
  if (scale < 0) return DoesNotFit(t, text, "not an integer");
  // 2^64 has 20 digits: anything longer is out of every range.
  if (static_cast<int64_t>(digits.size()) + scale > 20) return DoesNotFit(t, text);
  uint64_t magnitude = 0;
  if (!ParseInteger(std::string_view(digits), &magnitude)) return DoesNotFit(t, text);
  for (int64_t k = 0; k < scale; ++k)
    if (__builtin_mul_overflow(magnitude, uint64_t{10}, &magnitude)) return DoesNotFit(t, text);
  return IntegerValue(t, d.negative, magnitude, text);
}

// Element bytes <-> native values (little-endian, see the static_assert).
template <typename Int>
void Store(Int v, char* bytes) {
  std::memcpy(bytes, &v, sizeof v);
}
template <typename T>
T Load(const char* bytes) {
  T v;
  std::memcpy(&v, bytes, sizeof v);
  return v;
}

// The integer a value holds, as sign + magnitude, when it is integral.
bool IntegerParts(const Value& v, bool* negative, uint64_t* magnitude) {
  switch (v.kind) {
    case Value::Kind::kInt:
      *negative = v.i < 0;
      *magnitude = v.i < 0 ? ~static_cast<uint64_t>(v.i) + 1 : static_cast<uint64_t>(v.i);
      return true;
    case Value::Kind::kUInt:
      *negative = false;
      *magnitude = v.u;
      return true;
    case Value::Kind::kFloat: {
      const double f = v.f;
      if (!std::isfinite(f) || std::trunc(f) != f) return false;
      const double a = std::fabs(f);
      if (a >= 18446744073709551616.0) return false;  // 2^64
      *negative = f < 0;
      *magnitude = static_cast<uint64_t>(a);
      return true;
    }
  }
  return false;
}

double AsDouble(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return static_cast<double>(v.i);
    case Value::Kind::kUInt:
      return static_cast<double>(v.u);
    case Value::Kind::kFloat:
      return v.f;
  }
  return 0;
}

template <typename T>
void DecodeAll(const char* bytes, size_t count, double* out) {
  for (size_t k = 0; k < count; ++k) out[k] = static_cast<double>(Load<T>(bytes + k * sizeof(T)));
}

}  // namespace

size_t DTypeSize(DType t) { return Info(t).size; }
bool DTypeIsInteger(DType t) { return Info(t).is_integer; }
bool DTypeIsSigned(DType t) { return Info(t).is_signed; }
std::string_view DTypeName(DType t) { return Info(t).name; }

std::string DTypeDescr(DType t) {
  std::string descr(1, DTypeSize(t) == 1 ? '|' : '<');
  descr += DTypeName(t);
  return descr;
}

Result<DType> ParseDTypeName(std::string_view name) {
  for (const DTypeInfo& info : kInfos)
    if (name == info.name || name == info.long_name) return info.type;
  return Status::InvalidArgument(
      "", "unknown dtype '" + std::string(name) +
              "' (expected f8, f4, i8, i4, i2, i1, u8, u4, u2, u1 or float64, int32, uint8, ...)");
}

Result<Value> ParseValue(DType t, std::string_view raw_text) {
  const std::string_view text = TrimSpace(raw_text);
  if (text.empty()) return NotANumber(text);
  if (DTypeIsInteger(t)) {
    Decimal d;
    if (ScanDecimal(text, &d)) return IntegerFromDecimal(t, d, text);
    // Not a decimal literal: say "not finite" for nan/inf, else "not a number".
    double f;
    bool overflow;
    if (ParseReal(text, &f, &overflow) && !std::isfinite(f)) return DoesNotFit(t, text, "not a finite number");
    return NotANumber(text);
  }
  bool overflow = false;
  if (t == DType::kF4) {
    float f;
    if (!ParseReal(text, &f, &overflow)) return NotANumber(text);
    if (overflow) return DoesNotFit(t, text);
    return Value::Float(static_cast<double>(f));
  }
  double f;
  if (!ParseReal(text, &f, &overflow)) return NotANumber(text);
  if (overflow) return DoesNotFit(t, text);
  return Value::Float(f);
}

bool ValueFits(DType t, const Value& v) {
  if (!DTypeIsInteger(t)) {
    if (t == DType::kF8 || v.kind != Value::Kind::kFloat) return true;
    return !std::isfinite(v.f) || !std::isinf(static_cast<float>(v.f));
  }
  bool negative;
  uint64_t magnitude;
  if (!IntegerParts(v, &negative, &magnitude)) return false;
  if (negative && magnitude != 0) return DTypeIsSigned(t) && magnitude <= NegLimit(t);
  return magnitude <= PosLimit(t);
}

Result<Value> ValueFromDouble(DType t, double v) {
  const Value f = Value::Float(v);
  if (!ValueFits(t, f)) {
    const char* why = !DTypeIsInteger(t)   ? ""
                      : !std::isfinite(v)  ? "not a finite number"
                      : std::trunc(v) != v ? "not an integer"
                                           : "";
    return DoesNotFit(t, FormatValue(f), why);
  }
  if (t == DType::kF4) return Value::Float(static_cast<double>(static_cast<float>(v)));
  if (!DTypeIsInteger(t)) return f;
  bool negative = false;
  uint64_t magnitude = 0;
  const bool integral = IntegerParts(f, &negative, &magnitude);  // fits: checked above
  assert(integral);
  (void)integral;
  return IntegerValue(t, negative, magnitude, {});
}

void EncodeValue(DType t, const Value& v, char* bytes) {
  assert(ValueFits(t, v));
  if (!DTypeIsInteger(t)) {
    if (t == DType::kF8)
      Store(AsDouble(v), bytes);
    else
      Store(static_cast<float>(AsDouble(v)), bytes);
    return;
  }
  bool negative = false;
  uint64_t magnitude = 0;
  IntegerParts(v, &negative, &magnitude);
  // Two's complement: the low bytes of the 64-bit pattern are the narrow value.
  const uint64_t bits = negative ? ~magnitude + 1 : magnitude;
  switch (DTypeSize(t)) {
    case 8:
      Store(bits, bytes);
      break;
    case 4:
      Store(static_cast<uint32_t>(bits), bytes);
      break;
    case 2:
      Store(static_cast<uint16_t>(bits), bytes);
      break;
    default:
      Store(static_cast<uint8_t>(bits), bytes);
      break;
  }
}

Value DecodeValue(DType t, const char* bytes) {
  switch (t) {
    case DType::kF8:
      return Value::Float(Load<double>(bytes));
    case DType::kF4:
      return Value::Float(static_cast<double>(Load<float>(bytes)));
    case DType::kI8:
      return Value::Int(Load<int64_t>(bytes));
    case DType::kI4:
      return Value::Int(Load<int32_t>(bytes));
    case DType::kI2:
      return Value::Int(Load<int16_t>(bytes));
    case DType::kI1:
      return Value::Int(Load<int8_t>(bytes));
    case DType::kU8:
      return Value::UInt(Load<uint64_t>(bytes));
    case DType::kU4:
      return Value::UInt(Load<uint32_t>(bytes));
    case DType::kU2:
      return Value::UInt(Load<uint16_t>(bytes));
    case DType::kU1:
      return Value::UInt(Load<uint8_t>(bytes));
  }
  assert(false && "unknown dtype");
  return Value();
}

double DecodeDouble(DType t, const char* bytes) {
  double d;
  DecodeDoubles(t, bytes, 1, &d);
  return d;
}

void DecodeDoubles(DType t, const char* bytes, size_t count, double* out) {
  switch (t) {
    case DType::kF8:
      std::memcpy(out, bytes, count * sizeof(double));
      return;
    case DType::kF4:
      return DecodeAll<float>(bytes, count, out);
    case DType::kI8:
      return DecodeAll<int64_t>(bytes, count, out);
    case DType::kI4:
      return DecodeAll<int32_t>(bytes, count, out);
    case DType::kI2:
      return DecodeAll<int16_t>(bytes, count, out);
    case DType::kI1:
      return DecodeAll<int8_t>(bytes, count, out);
    case DType::kU8:
      return DecodeAll<uint64_t>(bytes, count, out);
    case DType::kU4:
      return DecodeAll<uint32_t>(bytes, count, out);
    case DType::kU2:
      return DecodeAll<uint16_t>(bytes, count, out);
    case DType::kU1:
      return DecodeAll<uint8_t>(bytes, count, out);
  }
  assert(false && "unknown dtype");
}

namespace {

template <typename F>
std::string FormatFloat(F f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  assert(ec == std::errc());
  return std::string(buf, end);
}

}  // namespace

std::string FormatValue(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return std::to_string(v.i);
    case Value::Kind::kUInt:
      return std::to_string(v.u);
    case Value::Kind::kFloat:
      return FormatFloat(v.f);
  }
  return "?";
}

std::string FormatValue(DType t, const Value& v) {
  if (t == DType::kF4 && v.kind == Value::Kind::kFloat && ValueFits(t, v)) return FormatFloat(static_cast<float>(v.f));
  return FormatValue(v);
}

}  // namespace momenta
