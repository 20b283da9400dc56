// PyLexer: the tokens of Python literals that storage/npy/py_literal.cc's parser
// is built from — number literals and string literals, lexed as Python 3.11
// lexes them — plus the cursor and the error message they share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/npy/py_literal.h"

namespace momenta {

// A byte that continues a Python identifier (non-ASCII counts: a letter or an
// invalid character, either way no literal).
bool IsPyWordChar(char c);

// Python's strict UTF-8: no overlong forms, no surrogates, at most U+10FFFF.
// On failure *bad is the offset of the first bad sequence.
bool ValidPyUtf8(std::string_view s, size_t* bad);

class PyLexer {
 public:
  PyLexer(std::string_view text, bool latin1) : text_(text), python2_(latin1) {}
  const std::string& error() const { return error_; }

 protected:
  bool AtLineBreak() const;  // at '\n' or '\r'
  void SkipLineBreak();      // "\r\n", '\r' or '\n'. REQUIRES: AtLineBreak()

  // A number literal at pos_ (a digit, or '.' and a digit): decimal, 0x, 0o,
  // 0b with underscores, no leading zeros; float; imaginary. Sets kind and,
  // for ints, the magnitude. What follows it is the caller's to check.
  bool LexNumber(PyLiteral* out);
  // At a string literal: an optional prefix of up to two r/u/b/f letters, then a quote.
  bool StringStart() const;
  // One string literal at pos_ (StringStart()): prefix, quotes, escapes.
  // *kind is kStr or kBytes; *out receives the value (UTF-8 for str;
  // latin1: the source's bytes are latin-1, else UTF-8).
  bool ParseOneString(PyLiteral::Kind* kind, std::string* out);

  // "'x' at byte 12" / "end of the header", for messages.
  std::string Here() const;
  // Keeps the first message; returns false.
  bool Fail(std::string message);

  const std::string_view text_;
  const bool python2_;  // .npy 1.0/2.0: latin-1 text, Python 2 "L" dropped
  size_t pos_ = 0;      // next byte to read; always <= text_.size()

 private:
  template <typename IsD>
  bool Digits(IsD is_digit, std::string* digits, bool leading_underscore_ok);
  static void Accumulate(PyLiteral* v, uint64_t base, uint64_t digit);
  // The prefix letters before a string's quote (pos_ moves to the quote);
  // false (with the message) for an invalid prefix or an f-string.
  bool ParseStringPrefix(bool* raw, bool* bytes);
  // The escape at pos_ (a backslash, not in a raw string, with a byte after
  // it): its value appended to *out, pos_ past it; false on a bad escape.
  bool ParseEscape(bool bytes, std::string* out);

  std::string error_;
};

}  // namespace momenta
