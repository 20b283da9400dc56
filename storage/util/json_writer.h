// A minimal JSON writer, the one every JSON answer is written with (the CLI's
// --json output, the root's `json` answers): one object or array per call,
// keys in insertion order, no spaces. JSON has no NaN or infinity: Double writes
// them as the strings "NaN", "Infinity", "-Infinity" (valid JSON, and what
// Python's json module and NumPy users read back with float()); an absent
// value is Null(). Strings are escaped per RFC 8259.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/value.h"

namespace momenta {

class JsonWriter {
 public:
  JsonWriter& BeginObject() {
    Separate();
    out_ += '{';
    first_ = true;
    return *this;
  }
  JsonWriter& EndObject() {
    out_ += '}';
    first_ = false;
    return *this;
  }
  JsonWriter& BeginArray() {
    Separate();
    out_ += '[';
    first_ = true;
    return *this;
  }
  JsonWriter& EndArray() {
    out_ += ']';
    first_ = false;
    return *this;
  }
  // The next value written is this key's value.
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& UInt(uint64_t v);
  JsonWriter& Double(double v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // An array element written exactly (integers as integers, floats shortest round-trip).
  JsonWriter& ElementValue(const Value& v);

  const std::string& str() const { return out_; }

 private:
  void Separate();
  void AppendEscaped(std::string_view s);

  std::string out_;
  bool first_ = true;       // no comma needed before the next element
  bool after_key_ = false;  // the next value completes a key/value pair
};

}  // namespace momenta
