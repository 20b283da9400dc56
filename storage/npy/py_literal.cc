#include "storage/npy/py_literal.h"

#include <algorithm>
#include <utility>

#include "storage/npy/py_tokens.h"

namespace momenta {
namespace {

using Kind = PyLiteral::Kind;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool Hashable(const PyLiteral& v) {
  if (v.kind == Kind::kList || v.kind == Kind::kDict || v.kind == Kind::kSet) return false;
  if (v.kind == Kind::kTuple)
    for (const PyLiteral& item : v.items)
      if (!Hashable(item)) return false;
  return true;
}

class Parser : public PyLexer {
 public:
  Parser(std::string_view text, PyHeaderText encoding) : PyLexer(text, encoding == PyHeaderText::kLatin1Python2) {}

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

  void SkipComment() {
    while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
  }
  // A backslash that ends a line joins it to the next one.
  // (Not at the very end: Python wants more after it.)
  bool Continuation() {
    if (pos_ + 2 < text_.size() && text_[pos_] == '\\' && (text_[pos_ + 1] == '\n' || text_[pos_ + 1] == '\r')) {
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
      const size_t start = pos_;
      return LexNumber(out) && EndOfNumber(start);
    }
    if (c == '.' && text_.substr(pos_, 3) == "...") {
      pos_ += 3;
      out->kind = Kind::kEllipsis;
      return true;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth + 1 > kMaxPyNesting) return Fail("nesting deeper than " + std::to_string(kMaxPyNesting) + " brackets");
      if (c == '(') return ParseParens(out, depth + 1, plain);
      if (c == '[') return ParseSequence(out, Kind::kList, ']', depth + 1);
      return ParseBraces(out, depth + 1);
    }
    if (IsPyWordChar(c) && !IsDigit(c)) return ParseName(out, depth);
    return Fail("unexpected " + Here());
  }

  bool ParseName(PyLiteral* out, int depth) {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsPyWordChar(text_[pos_])) ++pos_;
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
    if (pos_ >= text_.size() || text_[pos_] != ',') return Fail("expected ',' or ')' but found " + Here());
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
      if (pos_ >= text_.size() || text_[pos_] != ':') return Fail("expected ':' after a key but found " + Here());
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
      if (pos_ < text_.size() && text_[pos_] == 'L' && (pos_ + 1 == text_.size() || !IsPyWordChar(text_[pos_ + 1]))) {
        ++pos_;
        return true;
      }
      pos_ = save;
    }
    if (pos_ < text_.size() && (IsPyWordChar(text_[pos_]) || text_[pos_] == '.'))
      return Fail("invalid number literal at byte " + std::to_string(start));
    return true;
  }

  // ---- strings --------------------------------------------------------------

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

  size_t no_long_suffix_before_ = 0;  // bytes before this are in a line the filter leaves alone
};

}  // namespace

bool ParsePyLiteral(std::string_view text, PyHeaderText encoding, PyLiteral* out, std::string* error) {
  if (encoding == PyHeaderText::kUtf8) {
    size_t bad = 0;
    if (!ValidPyUtf8(text, &bad)) {
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
