// One element value, held exactly: integers as int64/uint64, floats as double.
// A plain number every layer may pass around (the JSON writer writes it, the
// dtypes in storage/npy/ convert it to and from text and bytes).
#pragma once

#include <cstdint>

namespace momenta {

struct Value {
  enum class Kind : uint8_t { kInt, kUInt, kFloat } kind = Kind::kFloat;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0.0;

  static Value Int(int64_t v) {
    Value x;
    x.kind = Kind::kInt;
    x.i = v;
    return x;
  }
  static Value UInt(uint64_t v) {
    Value x;
    x.kind = Kind::kUInt;
    x.u = v;
    return x;
  }
  static Value Float(double v) {
    Value x;
    x.kind = Kind::kFloat;
    x.f = v;
    return x;
  }
  long double AsLongDouble() const {
    switch (kind) {
      case Kind::kInt:
        return static_cast<long double>(i);
      case Kind::kUInt:
        return static_cast<long double>(u);
      case Kind::kFloat:
        return static_cast<long double>(f);
    }
    return 0;
  }
};

}  // namespace momenta
