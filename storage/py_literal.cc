#include "storage/py_literal.h"

#include <algorithm>
#include <utility>

namespace momenta {
namespace {

using Kind = PyLiteral::Kind;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  return IsDigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : c - 'A' + 10;
}
// A byte that continues a Python identifier (non-ASCII counts: a letter or an
// invalid character, either way no literal).
bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

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

bool Hashable(const PyLiteral& v) {
  if (v.kind == Kind::kList || v.kind == Kind::kDict || v.kind == Kind::kSet) return false;
  if (v.kind == Kind::kTuple)
    for (const PyLiteral& item : v.items)
      if (!Hashable(item)) return false;
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, PyHeaderText encoding)
      : text_(text), python2_(encoding == PyHeaderText::kLatin1Python2) {}

  bool ParseAll(PyLiteral* out) {
    for (char c : text_)
      if (c == '\0') return Fail("a NUL byte (Python refuses source with null bytes)");
    // literal_eval strips leading spaces and tabs; blank and comment lines may
    // follow, but the line holding the value may not be indented.
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    bool first_line = true;
    for (;;) {
      size_t indent = 0;
      while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f')) {
        // A form feed resets Python's indentation count; NumPy's 1.0/2.0
        // header filter turns it into a space first.
        indent = text_[pos_] == '\f' && !python2_ ? 0 : indent + 1;
        ++pos_;
      }
      if (!CheckCarriageReturnLine()) return false;
      if (pos_ < text_.size() && text_[pos_] == '#') SkipComment();
      if (AtLineBreak()) {
        SkipLineBreak();
        first_line = false;
        continue;
      }
      if (Continuation()) continue;
      if (!first_line && indent > 0) return Fail("unexpected indent at byte " + std::to_string(pos_));
      break;
    }
    if (!ParseValue(out, 0)) return false;
    // After the value: the rest of its line, then only blank or comment lines.
    Skip(0);
    if (pos_ == text_.size()) return true;
    if (!AtLineBreak()) return Fail("unexpected " + Here() + " after the dict");
    SkipLineBreak();
    while (pos_ < text_.size()) {
      const size_t line = pos_;
      while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f')) ++pos_;
      if (!CheckCarriageReturnLine()) return false;
      const bool comment = pos_ < text_.size() && text_[pos_] == '#';
      if (comment) SkipComment();
      if (AtLineBreak()) {
        SkipLineBreak();
        continue;
      }
      if (pos_ < text_.size()) return Fail("unexpected " + Here() + " after the dict");
      // A last line of only whitespace without a line break: Python 3.11 says
      // "unexpected indent"; the 1.0/2.0 header filter drops it first.
      // (Not after a lone '\r': the filter's tokenizer only breaks lines at '\n'.)
      if (pos_ > line && !comment && (!python2_ || text_[line - 1] == '\r'))
        return Fail("unexpected indent at byte " + std::to_string(line));
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  // ---- whitespace -----------------------------------------------------------

  // NumPy's 1.0/2.0 filter (Python's tokenize, which breaks lines at '\n'
  // only) takes a top-level line whose first non-blank byte is '\r' as one
  // blank line: untouched (no "L" dropped in it) when it ends in '\n', and a
  // ValueError when it is the last line and ends in neither '\r' nor '\n'.
  // Call at a top-level line start, after its spaces.
  bool CheckCarriageReturnLine() {
    if (!python2_ || pos_ >= text_.size() || text_[pos_] != '\r') return true;
    size_t start = pos_;
    while (start > 0 && (text_[start - 1] == ' ' || text_[start - 1] == '\t' || text_[start - 1] == '\f')) --start;
    if (start > 0 && text_[start - 1] != '\n') return true;  // not where tokenize starts a line
    const size_t end = text_.find('\n', pos_);
    if (end != std::string_view::npos) {
      no_long_suffix_before_ = std::max(no_long_suffix_before_, end);
      return true;
    }
    if (text_.back() == '\r') return true;
    return Fail("a line starting with '\\r' at byte " + std::to_string(pos_) +
                " that NumPy's header filter cannot read");
  }

  bool AtLineBreak() const {
    return pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r');
  }
  void SkipLineBreak() {
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
  }
  void SkipComment() {
    while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
  }
  // A backslash that ends a line joins it to the next one.
  // (Not at the very end: Python wants more after it.)
  bool Continuation() {
    if (pos_ + 2 < text_.size() && text_[pos_] == '\\' &&
        (text_[pos_ + 1] == '\n' || text_[pos_ + 1] == '\r')) {
      ++pos_;
      SkipLineBreak();
      return true;
    }
    return false;
  }
  // Spaces, comments and continuations; line breaks too inside brackets.
  void Skip(int depth) {
    for (;;) {
      if (pos_ >= text_.size()) return;
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        SkipComment();
      } else if (depth > 0 && AtLineBreak()) {
        SkipLineBreak();
      } else if (!Continuation()) {
        return;
      }
    }
  }

  // ---- values ---------------------------------------------------------------

  // One value as a dict item, list item or the like: an atom, a signed
  // number, or real +/- imaginary. `depth` counts open brackets. *plain
  // (optional): the value is one number literal, perhaps in parentheses —
  // what literal_eval allows after a sign or as the imaginary part.
  bool ParseValue(PyLiteral* out, int depth, bool* plain = nullptr) {
    Skip(depth);
    bool value_plain = false;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      const bool minus = text_[pos_++] == '-';
      Skip(depth);
      bool operand_plain = false;
      if (!ParseAtom(out, depth, &operand_plain)) return false;
      if (!operand_plain)
        return Fail("a sign before something other than a number before byte " + std::to_string(pos_));
      if (minus) Negate(out);
    } else {
      if (!ParseAtom(out, depth, &value_plain)) return false;
    }
    // real + imaginary / real - imaginary
    const size_t save = pos_;
    Skip(depth);
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      const bool is_real = out->kind == Kind::kInt || out->kind == Kind::kFloat;
      ++pos_;
      Skip(depth);
      PyLiteral right;
      bool right_plain = false;
      if (!ParseAtom(&right, depth, &right_plain)) return false;
      if (!is_real || !right_plain || right.kind != Kind::kComplex)
        return Fail("arithmetic other than real +/- imaginary before byte " + std::to_string(pos_));
      out->kind = Kind::kComplex;
      value_plain = false;
    } else {
      pos_ = save;
    }
    if (plain != nullptr) *plain = value_plain;
    return true;
  }

  static void Negate(PyLiteral* v) {
    if (v->kind == Kind::kInt) v->negative = (v->magnitude != 0 || v->huge) && !v->negative;
  }

  // *plain: the atom is a number literal (possibly parenthesised).
  bool ParseAtom(PyLiteral* out, int depth, bool* plain) {
    *plain = false;
    Skip(depth);
    if (pos_ >= text_.size()) return Fail("unexpected end of the header");
    const char c = text_[pos_];
    if (StringStart()) return ParseStrings(out, depth);
    if (IsDigit(c) || (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
      *plain = true;
      return ParseNumber(out);
    }
    if (c == '.' && text_.substr(pos_, 3) == "...") {
      pos_ += 3;
      out->kind = Kind::kEllipsis;
      return true;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth + 1 > kMaxPyNesting)
        return Fail("nesting deeper than " + std::to_string(kMaxPyNesting) + " brackets");
      if (c == '(') return ParseParens(out, depth + 1, plain);
      if (c == '[') return ParseSequence(out, Kind::kList, ']', depth + 1);
      return ParseBraces(out, depth + 1);
    }
    if (IsWordChar(c) && !IsDigit(c)) return ParseName(out, depth);
    return Fail("unexpected " + Here());
  }

  bool ParseName(PyLiteral* out, int depth) {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    if (word == "True" || word == "False") {
      out->kind = Kind::kBool;
      out->flag = word == "True";
      return true;
    }
    if (word == "None") {
      out->kind = Kind::kNone;
      return true;
    }
    if (word == "set") {  // set() is the one call literal_eval allows
      Skip(depth);
      if (pos_ < text_.size() && text_[pos_] == '(') {
        ++pos_;
        Skip(depth + 1);
        if (pos_ < text_.size() && text_[pos_] == ')') {
          ++pos_;
          out->kind = Kind::kSet;
          return true;
        }
      }
    }
    pos_ = start;
    return Fail("unexpected " + Here() + " (a name other than True, False, None)");
  }

  // "(" ... ")": a tuple, or one parenthesised value.
  bool ParseParens(PyLiteral* out, int depth, bool* plain) {
    ++pos_;  // '('
    Skip(depth);
    if (pos_ < text_.size() && text_[pos_] == ')') {
      ++pos_;
      out->kind = Kind::kTuple;
      return true;
    }
    PyLiteral first;
    bool first_plain = false;
    if (!ParseValue(&first, depth, &first_plain)) return false;
    Skip(depth);
    if (pos_ < text_.size() && text_[pos_] == ')') {
      ++pos_;
      *out = std::move(first);
      *plain = first_plain;
      return true;
    }
    out->kind = Kind::kTuple;
    out->items.push_back(std::move(first));
    if (pos_ >= text_.size() || text_[pos_] != ',')
      return Fail("expected ',' or ')' but found " + Here());
    ++pos_;
    return ParseItems(out, ')', depth);
  }

  bool ParseSequence(PyLiteral* out, Kind kind, char close, int depth) {
    ++pos_;  // opening bracket
    out->kind = kind;
    return ParseItems(out, close, depth);
  }

  // Items separated by commas, an optional trailing comma, then `close`.
  bool ParseItems(PyLiteral* out, char close, int depth) {
    for (;;) {
      Skip(depth);
      if (pos_ < text_.size() && text_[pos_] == close) break;
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth)) return false;
      if (out->kind == Kind::kSet && !Hashable(out->items.back()))
        return Fail("unhashable set item before byte " + std::to_string(pos_));
      Skip(depth);
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == close) break;
      return Fail(std::string("expected ',' or '") + close + "' but found " + Here());
    }
    ++pos_;  // closing bracket
    return true;
  }

  // "{" ... "}": a dict, or a set when the first item has no ':'.
  bool ParseBraces(PyLiteral* out, int depth) {
    ++pos_;  // '{'
    out->kind = Kind::kDict;
    Skip(depth);
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    PyLiteral first;
    if (!ParseValue(&first, depth)) return false;
    Skip(depth);
    if (pos_ < text_.size() && text_[pos_] != ':') {  // a set
      out->kind = Kind::kSet;
      if (!Hashable(first)) return Fail("unhashable set item before byte " + std::to_string(pos_));
      out->items.push_back(std::move(first));
      if (text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (text_[pos_] != ',') return Fail("expected ',' or '}' but found " + Here());
      ++pos_;
      return ParseItems(out, '}', depth);
    }
    out->items.push_back(std::move(first));
    for (;;) {
      if (!Hashable(out->items.back())) return Fail("unhashable dict key before byte " + std::to_string(pos_));
      Skip(depth);
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return Fail("expected ':' after a key but found " + Here());
      ++pos_;
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth)) return false;
      Skip(depth);
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        Skip(depth);
        if (pos_ < text_.size() && text_[pos_] == '}') break;
        out->items.emplace_back();
        if (!ParseValue(&out->items.back(), depth)) return false;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') break;
      return Fail("expected ',' or '}' but found " + Here());
    }
    ++pos_;  // '}'
    return true;
  }

  // ---- numbers --------------------------------------------------------------

  // Digits (per is_digit) with single underscores between them, appended to
  // *digits; fails on a misplaced underscore or no digit at all.
  template <typename IsD>
  bool Digits(IsD is_digit, std::string* digits, bool leading_underscore_ok) {
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

  bool ParseNumber(PyLiteral* out) {
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
      return EndOfNumber(start);
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
      return EndOfNumber(start);
    }
    if (is_float) {
      out->kind = Kind::kFloat;
      return EndOfNumber(start);
    }
    // A decimal integer: no leading zeros unless it is all zeros.
    if (int_digits.size() > 1 && int_digits[0] == '0' &&
        int_digits.find_first_not_of('0') != std::string::npos)
      return Fail("leading zeros in a decimal integer at byte " + std::to_string(start));
    out->kind = Kind::kInt;
    for (char d : int_digits) Accumulate(out, 10, static_cast<uint64_t>(d - '0'));
    return EndOfNumber(start);
  }

  static void Accumulate(PyLiteral* v, uint64_t base, uint64_t digit) {
    if (__builtin_mul_overflow(v->magnitude, base, &v->magnitude) ||
        __builtin_add_overflow(v->magnitude, digit, &v->magnitude))
      v->huge = true;
  }

  // After a number: no identifier may follow — except, in .npy 1.0/2.0
  // headers, a Python 2 "L" token (NumPy's filter drops it, also after
  // spaces or a continuation).
  bool EndOfNumber(size_t start) {
    if (python2_ && pos_ >= no_long_suffix_before_) {
      const size_t save = pos_;
      for (;;) {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\f')) ++pos_;
        if (!Continuation()) break;
      }
      if (pos_ < text_.size() && text_[pos_] == 'L' &&
          (pos_ + 1 == text_.size() || !IsWordChar(text_[pos_ + 1]))) {
        ++pos_;
        return true;
      }
      pos_ = save;
    }
    if (pos_ < text_.size() && (IsWordChar(text_[pos_]) || text_[pos_] == '.'))
      return Fail("invalid number literal at byte " + std::to_string(start));
    return true;
  }

  // ---- strings --------------------------------------------------------------

  // At a string literal: an optional prefix of r/u/b/f letters, then a quote.
  bool StringStart() const {
    size_t p = pos_;
    while (p < text_.size() && p - pos_ < 2 && std::string_view("rRuUbBfF").find(text_[p]) != std::string_view::npos)
      ++p;
    return p < text_.size() && (text_[p] == '\'' || text_[p] == '"') &&
           (p == pos_ || p == pos_ + 1 || p == pos_ + 2);
  }

  // One or more adjacent string literals, concatenated.
  bool ParseStrings(PyLiteral* out, int depth) {
    bool first = true;
    for (;;) {
      Kind kind;
      std::string piece;
      if (!ParseOneString(&kind, &piece)) return false;
      if (first) {
        out->kind = kind;
        first = false;
      } else if (kind != out->kind) {
        return Fail("bytes and str literals mixed at byte " + std::to_string(pos_));
      }
      out->text += piece;
      const size_t save = pos_;
      Skip(depth);
      if (pos_ < text_.size() && StringStart()) continue;
      pos_ = save;
      return true;
    }
  }

  bool ParseOneString(Kind* kind, std::string* out) {
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
    const bool valid_prefix =
        prefix == 0 || (prefix == 1) ||
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
      pos_ += 2;
      switch (e) {
        case '\n': continue;
        case '\r':
          if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
          continue;
        case '\\': out->push_back('\\'); continue;
        case '\'': out->push_back('\''); continue;
        case '"': out->push_back('"'); continue;
        case 'a': out->push_back('\a'); continue;
        case 'b': out->push_back('\b'); continue;
        case 'f': out->push_back('\f'); continue;
        case 'n': out->push_back('\n'); continue;
        case 'r': out->push_back('\r'); continue;
        case 't': out->push_back('\t'); continue;
        case 'v': out->push_back('\v'); continue;
        default: break;
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
        continue;
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
        continue;
      }
      if (!bytes && e == 'N')
        return Fail("a \\N{...} escape at byte " + std::to_string(pos_ - 2) + " (not supported)");
      if (static_cast<unsigned char>(e) >= 0x80) {  // backslash + a non-ASCII character: kept
        out->push_back('\\');
        --pos_;
        continue;
      }
      out->push_back('\\');  // an unknown escape is kept as written
      out->push_back(e);
    }
  }

  // ---- messages -------------------------------------------------------------

  std::string Here() const {
    if (pos_ >= text_.size()) return "end of the header";
    const auto c = static_cast<unsigned char>(text_[pos_]);
    const std::string shown = c < 0x20 || c >= 0x7f ? "?" : std::string(1, static_cast<char>(c));
    return "'" + shown + "' at byte " + std::to_string(pos_);
  }

  bool Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  const std::string_view text_;
  const bool python2_;
  size_t pos_ = 0;  // next byte to read; always <= text_.size()
  size_t no_long_suffix_before_ = 0;  // bytes before this are in a line the filter leaves alone
  std::string error_;
};

// Python's strict UTF-8: no overlong forms, no surrogates, at most U+10FFFF.
bool ValidUtf8(std::string_view s, size_t* bad) {
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

}  // namespace

bool ParsePyLiteral(std::string_view text, PyHeaderText encoding, PyLiteral* out,
                    std::string* error) {
  if (encoding == PyHeaderText::kUtf8) {
    size_t bad = 0;
    if (!ValidUtf8(text, &bad)) {
      *error = "invalid UTF-8 at byte " + std::to_string(bad);
      return false;
    }
  }
  Parser parser(text, encoding);
  if (parser.ParseAll(out)) return true;
  *error = parser.error();
  return false;
}

}  // namespace momenta
