#include "storage/npy/py_tokens.h"

namespace momenta {
namespace {

using Kind = PyLiteral::Kind;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) { return IsDigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : c - 'A' + 10; }
void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace

bool IsPyWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool ValidPyUtf8(std::string_view s, size_t* bad) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
      *bad = i;
      return false;
    }
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) {
        *bad = i;
        return false;
      }
      cp = (cp << 6) | (d & 0x3f);
    }
    const bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      *bad = i;
      return false;
    }
    i += n;
  }
  return true;
}

bool PyLexer::AtLineBreak() const { return pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r'); }

void PyLexer::SkipLineBreak() {
  if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
  ++pos_;
}

// Digits (per is_digit) with single underscores between them, appended to
// *digits; fails on a misplaced underscore or no digit at all.
template <typename IsD>
bool PyLexer::Digits(IsD is_digit, std::string* digits, bool leading_underscore_ok) {
  bool need = !leading_underscore_ok;
  if (leading_underscore_ok && pos_ < text_.size() && text_[pos_] == '_') {
    ++pos_;
    need = true;
  }
  bool any = false;
  while (pos_ < text_.size()) {
    if (is_digit(text_[pos_])) {
      digits->push_back(text_[pos_++]);
      any = true;
      need = false;
      continue;
    }
    if (text_[pos_] == '_' && any && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])) {
      ++pos_;
      need = true;
      continue;
    }
    break;
  }
  if (need || !any) return Fail("invalid number literal at byte " + std::to_string(pos_));
  return true;
}

bool PyLexer::LexNumber(PyLiteral* out) {
  const size_t start = pos_;
  std::string digits;
  if (text_[pos_] == '0' && pos_ + 1 < text_.size() &&
      std::string_view("xXoObB").find(text_[pos_ + 1]) != std::string_view::npos) {
    const char base_char = static_cast<char>(text_[pos_ + 1] | 0x20);
    pos_ += 2;
    const int base = base_char == 'x' ? 16 : base_char == 'o' ? 8 : 2;
    auto is_digit = [base](char c) {
      return base == 16 ? IsHex(c) : base == 8 ? (c >= '0' && c <= '7') : (c == '0' || c == '1');
    };
    if (!Digits(is_digit, &digits, /*leading_underscore_ok=*/true)) return false;
    out->kind = Kind::kInt;
    for (char d : digits) Accumulate(out, static_cast<uint64_t>(base), static_cast<uint64_t>(HexValue(d)));
    return true;
  }
  bool is_float = false;
  if (text_[pos_] != '.') {
    if (!Digits(IsDigit, &digits, false)) return false;
  }
  std::string int_digits = digits;
  if (pos_ < text_.size() && text_[pos_] == '.') {
    is_float = true;
    ++pos_;
    if (pos_ < text_.size() && IsDigit(text_[pos_])) {
      std::string frac;
      if (!Digits(IsDigit, &frac, false)) return false;
    } else if (int_digits.empty()) {
      return Fail("invalid number literal at byte " + std::to_string(start));
    }
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    const size_t e = pos_;
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (pos_ < text_.size() && IsDigit(text_[pos_])) {
      std::string exp;
      if (!Digits(IsDigit, &exp, false)) return false;
      is_float = true;
    } else {
      pos_ = e;
      return Fail("invalid number literal at byte " + std::to_string(start));
    }
  }
  if (pos_ < text_.size() && (text_[pos_] == 'j' || text_[pos_] == 'J')) {
    ++pos_;
    out->kind = Kind::kComplex;
    return true;
  }
  if (is_float) {
    out->kind = Kind::kFloat;
    return true;
  }
  // A decimal integer: no leading zeros unless it is all zeros.
  if (int_digits.size() > 1 && int_digits[0] == '0' && int_digits.find_first_not_of('0') != std::string::npos)
    return Fail("leading zeros in a decimal integer at byte " + std::to_string(start));
  out->kind = Kind::kInt;
  for (char d : int_digits) Accumulate(out, 10, static_cast<uint64_t>(d - '0'));
  return true;
}

void PyLexer::Accumulate(PyLiteral* v, uint64_t base, uint64_t digit) {
  if (__builtin_mul_overflow(v->magnitude, base, &v->magnitude) ||
      __builtin_add_overflow(v->magnitude, digit, &v->magnitude))
    v->huge = true;
}

// At a string literal: an optional prefix of r/u/b/f letters, then a quote.
bool PyLexer::StringStart() const {
  size_t p = pos_;
  while (p < text_.size() && p - pos_ < 2 && std::string_view("rRuUbBfF").find(text_[p]) != std::string_view::npos) ++p;
  return p < text_.size() && (text_[p] == '\'' || text_[p] == '"') && (p == pos_ || p == pos_ + 1 || p == pos_ + 2);
}

bool PyLexer::ParseStringPrefix(bool* raw_out, bool* bytes_out) {
  const size_t start = pos_;
  bool raw = false, bytes = false, format = false, unicode = false;
  while (text_[pos_] != '\'' && text_[pos_] != '"') {
    const char c = static_cast<char>(text_[pos_] | 0x20);
    raw |= c == 'r';
    bytes |= c == 'b';
    format |= c == 'f';
    unicode |= c == 'u';
    ++pos_;
  }
  const size_t prefix = pos_ - start;
  const bool valid_prefix = prefix == 0 || (prefix == 1) ||
                            (prefix == 2 && raw && (bytes || format) && !unicode &&
                             static_cast<char>(text_[start] | 0x20) != static_cast<char>(text_[start + 1] | 0x20));
  if (!valid_prefix) {
    pos_ = start;
    return Fail("unexpected " + Here() + " (not a string prefix)");
  }
  if (format) {
    pos_ = start;
    return Fail("an f-string at byte " + std::to_string(start) + " (not a literal)");
  }
  *raw_out = raw;
  *bytes_out = bytes;
  return true;
}

bool PyLexer::ParseEscape(bool bytes, std::string* out) {
  const char e = text_[pos_ + 1];
  pos_ += 2;
  switch (e) {
    case '\n':
      return true;
    case '\r':
      if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
      return true;
    case '\\':
      out->push_back('\\');
      return true;
    case '\'':
      out->push_back('\'');
      return true;
    case '"':
      out->push_back('"');
      return true;
    case 'a':
      out->push_back('\a');
      return true;
    case 'b':
      out->push_back('\b');
      return true;
    case 'f':
      out->push_back('\f');
      return true;
    case 'n':
      out->push_back('\n');
      return true;
    case 'r':
      out->push_back('\r');
      return true;
    case 't':
      out->push_back('\t');
      return true;
    case 'v':
      out->push_back('\v');
      return true;
    default:
      break;
  }
  if (e >= '0' && e <= '7') {
    uint32_t v = static_cast<uint32_t>(e - '0');
    for (int k = 0; k < 2 && pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7'; ++k)
      v = v * 8 + static_cast<uint32_t>(text_[pos_++] - '0');
    if (bytes) {
      out->push_back(static_cast<char>(v & 0xff));
    } else {
      AppendUtf8(v, out);
    }
    return true;
  }
  const int hex_digits = e == 'x' ? 2 : (!bytes && e == 'u') ? 4 : (!bytes && e == 'U') ? 8 : 0;
  if (hex_digits > 0) {
    uint32_t v = 0;
    for (int k = 0; k < hex_digits; ++k) {
      if (pos_ >= text_.size() || !IsHex(text_[pos_]))
        return Fail("a truncated \\" + std::string(1, e) + " escape at byte " + std::to_string(pos_));
      v = v * 16 + static_cast<uint32_t>(HexValue(text_[pos_++]));
    }
    if (v > 0x10ffff) return Fail("an escape beyond U+10FFFF at byte " + std::to_string(pos_));
    if (bytes) {
      out->push_back(static_cast<char>(v));
    } else {
      AppendUtf8(v, out);
    }
    return true;
  }
  if (!bytes && e == 'N') return Fail("a \\N{...} escape at byte " + std::to_string(pos_ - 2) + " (not supported)");
  if (static_cast<unsigned char>(e) >= 0x80) {  // backslash + a non-ASCII character: kept
    out->push_back('\\');
    --pos_;
    return true;
  }
  out->push_back('\\');  // an unknown escape is kept as written
  out->push_back(e);
  return true;
}

bool PyLexer::ParseOneString(Kind* kind, std::string* out) {
  const size_t start = pos_;
  bool raw = false, bytes = false;
  if (!ParseStringPrefix(&raw, &bytes)) return false;
  *kind = bytes ? Kind::kBytes : Kind::kStr;
  const char quote = text_[pos_];
  const bool triple = text_.substr(pos_, 3) == std::string(3, quote);
  pos_ += triple ? 3 : 1;
  for (;;) {
    if (pos_ >= text_.size()) return Fail("unterminated string starting at byte " + std::to_string(start));
    const char c = text_[pos_];
    if (c == quote && (!triple || text_.substr(pos_, 3) == std::string(3, quote))) {
      pos_ += triple ? 3 : 1;
      return true;
    }
    if (!triple && (c == '\n' || c == '\r'))
      return Fail("unterminated string starting at byte " + std::to_string(start));
    if (static_cast<unsigned char>(c) >= 0x80) {
      if (bytes) return Fail("a non-ASCII character in a bytes literal at byte " + std::to_string(pos_));
      if (python2_) {
        AppendUtf8(static_cast<unsigned char>(c), out);  // latin-1
      } else {
        out->push_back(c);  // already UTF-8 (checked by the caller)
      }
      ++pos_;
      continue;
    }
    if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {  // in a triple-quoted string
      out->push_back('\n');
      pos_ += 2;
      continue;
    }
    if (c == '\r') {
      out->push_back('\n');
      ++pos_;
      continue;
    }
    if (c != '\\') {
      out->push_back(c);
      ++pos_;
      continue;
    }
    // A backslash.
    if (pos_ + 1 >= text_.size()) return Fail("unterminated string starting at byte " + std::to_string(start));
    const char e = text_[pos_ + 1];
    if (raw) {  // kept as written; it only stops the next quote or line break ending the string
      out->push_back('\\');
      ++pos_;
      if (static_cast<unsigned char>(e) >= 0x80) continue;  // the next round copies it
      if (e == '\r') {
        out->push_back('\n');
        SkipLineBreak();
        continue;
      }
      out->push_back(e);
      ++pos_;
      continue;
    }
    if (!ParseEscape(bytes, out)) return false;
  }
}

std::string PyLexer::Here() const {
  if (pos_ >= text_.size()) return "end of the header";
  const auto c = static_cast<unsigned char>(text_[pos_]);
  const std::string shown = c < 0x20 || c >= 0x7f ? "?" : std::string(1, static_cast<char>(c));
  return "'" + shown + "' at byte " + std::to_string(pos_);
}

bool PyLexer::Fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
  return false;
}

}  // namespace momenta
