#include "storage/util/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace momenta {

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_) out_ += ',';
  first_ = false;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  Separate();
  AppendEscaped(key);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  Separate();
  AppendEscaped(s);
  return *this;
}

void JsonWriter::AppendEscaped(std::string_view s) {
  out_ += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += static_cast<char>(c);
        }
    }
  }
  out_ += '"';
}

JsonWriter& JsonWriter::Int(int64_t v) {
  Separate();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::UInt(uint64_t v) {
  Separate();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  Separate();
  if (std::isnan(v)) {
    out_ += "\"NaN\"";
    return *this;
  }
  if (std::isinf(v)) {
    out_ += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
    return *this;
  }
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, res.ptr);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::ElementValue(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kInt:
      return Int(v.i);
    case Value::Kind::kUInt:
      return UInt(v.u);
    case Value::Kind::kFloat:
      return Double(v.f);
  }
  return Null();
}

}  // namespace momenta
