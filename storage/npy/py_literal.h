// PyLiteral: the Python literals that NumPy's .npy reader accepts in a header.
//
// NumPy reads the header dict with ast.literal_eval (after, for format
// versions 1.0 and 2.0, dropping a Python 2 "L" that follows a number token).
// ParsePyLiteral mirrors that grammar (Python 3.11), so that momenta accepts
// exactly the dicts NumPy accepts:
//   - str and bytes literals with every prefix (r, u, b, br, rb in any case;
//     f-strings are refused as literal_eval refuses them), triple quotes,
//     implicit concatenation, and Python's escapes (\x, octal, \u, \U,
//     backslash-newline; unknown escapes are kept). \N{name} is refused: we
//     carry no Unicode name table;
//   - int (decimal, 0x, 0o, 0b, underscores, no leading zeros), float and
//     complex literals, + and - before a number, real +/- imaginary;
//   - True, False, None, Ellipsis (...), tuples, lists, sets, set(), dicts
//     (keys and set items must be hashable);
//   - whitespace " \t\f", comments, line breaks inside brackets, backslash
//     continuations, blank lines before and after, but no indented first line.
// (The number and string tokens are lexed by PyLexer, storage/npy/py_tokens.h.)
// Any other byte sequence is an error with a one-line message saying what and
// where. Nesting deeper than kMaxPyNesting brackets is refused (so does
// Python 3.11: "too many nested parentheses").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace momenta {

inline constexpr int kMaxPyNesting = 200;

struct PyLiteral {
  enum class Kind { kStr, kBytes, kInt, kFloat, kComplex, kBool, kNone, kEllipsis, kTuple, kList, kSet, kDict };
  Kind kind = Kind::kNone;
  std::string text;        // kStr: UTF-8 (lone surrogates as their 3-byte form); kBytes: the bytes
  bool negative = false;   // kInt: the sign (never set for 0)
  uint64_t magnitude = 0;  // kInt: |value| when !huge
  bool huge = false;       // kInt: |value| is 2^64 or more
  bool flag = false;       // kBool
  // kTuple, kList, kSet: the elements; kDict: key, value, key, value, ... in
  // source order (a repeated key appears twice; Python keeps the last value).
  std::vector<PyLiteral> items;
};

// How the header's bytes became text before NumPy parsed them.
enum class PyHeaderText {
  kLatin1Python2,  // .npy 1.0 / 2.0: latin-1, and "L" after a number dropped
  kUtf8,           // .npy 3.0: UTF-8 (invalid UTF-8 is an error)
};

// Parses `text` as ast.literal_eval would (see above). On failure returns
// false and sets *error (e.g. "unterminated string at byte 12").
bool ParsePyLiteral(std::string_view text, PyHeaderText encoding, PyLiteral* out, std::string* error);

}  // namespace momenta
