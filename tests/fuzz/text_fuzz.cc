// Fuzz target `text`: the reader of `momenta import`'s text/CSV input
// (tools/text_values.h: ForEachTextValue) and the value
// parser it calls per token (ParseValue, storage/npy/dtype.h).
//
// Input: one byte choosing the dtype (byte % 10, in DType order: f8 f4 i8
// i4 i2 i1 u8 u4 u2 u1), then the file's bytes (the first 1024). Checked:
//   - the tokens and their line numbers are those of a plain reference
//     split (separators ",; \t\r\n", '#' to the end of the line);
//   - every accepted value fits the dtype and is of the dtype's kind, and
//     FormatValue of it parses back to the same value;
//   - float dtypes: a token is accepted exactly when strtod (strtof for f4)
//     reads the whole of it (blanks trimmed) without overflowing to
//     infinity, with strtod's value;
//   - integer dtypes: an accepted value equals strtold of the token (exact:
//     long double holds every integer up to 2^64); a token of the form
//     [+-]digits[e[+]digits] -- an integer whatever its digits -- is
//     accepted exactly when strtold's value lies in the dtype's range;
//   - the table reader (ScanTextTable, ForEachTableValue) against the
//     tokens grouped by line: header, ragged rows, the values and shape.
// Seeds (tests/data/fuzz/text/): small CSV and text files, written by hand,
// each led by its dtype byte ('0' f8, '1' f4, '2' i8, '6' u8, '9' u1).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "storage/npy/dtype.h"
#include "tests/fuzz/fuzz_check.h"
#include "tools/text_table.h"
#include "tools/text_values.h"

namespace {

using namespace momenta;

struct Token {
  std::string_view text;
  uint64_t line;
};

std::vector<Token> ReferenceTokens(std::string_view text) {
  std::vector<Token> out;
  uint64_t line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '#') {
      i = text.find('\n', i);
      if (i == std::string_view::npos) i = text.size();
    } else if (std::string_view(",; \t\r").find(c) != std::string_view::npos) {
      ++i;
    } else {
      const size_t j = std::min(text.find_first_of(std::string_view(",; \t\r\n#"), i), text.size());
      out.push_back({text.substr(i, j - i), line});
      i = j;
    }
  }
  return out;
}

std::string Trim(std::string_view s) {
  const std::string_view space = " \t\n\r\f\v";
  const size_t a = s.find_first_not_of(space);
  if (a == std::string_view::npos) return "";
  return std::string(s.substr(a, s.find_last_not_of(space) - a + 1));
}

bool SameValue(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::kInt:
      return a.i == b.i;
    case Value::Kind::kUInt:
      return a.u == b.u;
    case Value::Kind::kFloat:
      return std::isnan(a.f) ? std::isnan(b.f) : std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
  }
  return false;
}

// [+-] digits [e [+] digits]: an integer whatever its digits.
bool IntegerForm(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == start) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && s[i] == '+') ++i;
    const size_t e = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == e) return false;
  }
  return i == s.size();
}

long double Low(DType t) {
  switch (t) {
    case DType::kI8:
      return -0x1p63L;
    case DType::kI4:
      return -0x1p31L;
    case DType::kI2:
      return -0x1p15L;
    case DType::kI1:
      return -0x1p7L;
    default:
      return 0;
  }
}
long double High(DType t) {
  switch (t) {
    case DType::kI8:
      return 0x1p63L - 1;
    case DType::kI4:
      return 0x1p31L - 1;
    case DType::kI2:
      return 0x1p15L - 1;
    case DType::kI1:
      return 0x1p7L - 1;
    case DType::kU8:
      return 0x1p64L - 1;
    case DType::kU4:
      return 0x1p32L - 1;
    case DType::kU2:
      return 0x1p16L - 1;
    default:
      return 0x1p8L - 1;
  }
}

void CheckValue(DType t, std::string_view token) {
  auto got = ParseValue(t, token);
  const std::string s = Trim(token);
  if (got.ok()) {
    FUZZ_CHECK(ValueFits(t, *got), "accepted a value that does not fit the dtype");
    const Value::Kind kind = !DTypeIsInteger(t) ? Value::Kind::kFloat
                             : DTypeIsSigned(t) ? Value::Kind::kInt
                                                : Value::Kind::kUInt;
    FUZZ_CHECK(got->kind == kind, "value of the wrong kind for its dtype");
    auto again = ParseValue(t, FormatValue(t, *got));
    FUZZ_CHECK(again.ok(), again.status().ToString().c_str());
    FUZZ_CHECK(SameValue(*again, *got), "FormatValue does not parse back to the same value");
  } else {
    FUZZ_CHECK(got.status().code() == Status::Code::kInvalidArgument, got.status().ToString().c_str());
  }
  char* end = nullptr;
  errno = 0;
  if (t == DType::kF8 || t == DType::kF4) {
    const double ref =
        t == DType::kF8 ? std::strtod(s.c_str(), &end) : static_cast<double>(std::strtof(s.c_str(), &end));
    const bool whole = !s.empty() && end == s.c_str() + s.size();
    const bool overflow = errno == ERANGE && std::isinf(ref);
    FUZZ_CHECK(got.ok() == (whole && !overflow), "float accepted differently from strtod");
    if (got.ok()) FUZZ_CHECK(SameValue(*got, Value::Float(ref)), "float value differs from strtod");
    return;
  }
  const long double ref = std::strtold(s.c_str(), &end);
  const bool whole = !s.empty() && end == s.c_str() + s.size();
  if (got.ok()) {
    FUZZ_CHECK(whole, "accepted an integer strtold does not read whole");
    const long double v =
        got->kind == Value::Kind::kInt ? static_cast<long double>(got->i) : static_cast<long double>(got->u);
    FUZZ_CHECK(v == ref, "integer value differs from strtold");
  }
  if (IntegerForm(s) && whole)
    FUZZ_CHECK(got.ok() == (ref >= Low(t) && ref <= High(t)), "integer accepted differently from its range");
}

// The table reader (tools/text_table.h) against the tokens grouped by line:
// a first line with no number is the header; it accepts exactly when every
// later line holds as many tokens as the first row and each parses, and then
// hands over exactly the data lines' tokens, as many as its shape holds.
void CheckTable(DType dtype, std::string_view text, const std::vector<Token>& tokens) {
  std::vector<std::vector<const Token*>> lines;
  for (const Token& t : tokens) {
    if (lines.empty() || lines.back().front()->line != t.line) lines.emplace_back();
    lines.back().push_back(&t);
  }
  size_t first = 0;
  if (!lines.empty() && std::none_of(lines[0].begin(), lines[0].end(),
                                     [](const Token* t) { return ParseValue(DType::kF8, t->text).ok(); }))
    first = 1;
  bool good = true;
  for (size_t l = first; l < lines.size(); ++l) {
    good = good && lines[l].size() == lines[first].size();
    for (const Token* t : lines[l]) good = good && ParseValue(dtype, t->text).ok();
  }
  auto table = cli::ScanTextTable(text, dtype, "in.csv", {});
  FUZZ_CHECK(table.ok() == good, table.ok() ? "ScanTextTable accepted a bad table" : "ScanTextTable refused a table");
  if (!good) return;
  FUZZ_CHECK(table->header_detected == (first == 1), "header detected differently");
  std::vector<std::string_view> got;
  const Status walked = cli::ForEachTableValue(text, *table, "in.csv", [&](std::string_view tok, uint64_t) {
    got.push_back(tok);
    return Status::OK();
  });
  FUZZ_CHECK(walked.ok(), walked.ToString().c_str());
  std::vector<std::string_view> want;
  for (size_t l = first; l < lines.size(); ++l)
    for (const Token* t : lines[l]) want.push_back(t->text);
  FUZZ_CHECK(got == want, "ForEachTableValue differs from the data lines' tokens");
  uint64_t elements = 1;
  for (uint64_t d : table->Shape()) elements *= d;
  FUZZ_CHECK(elements == want.size(), "the table's shape does not hold its values");
}

}  // namespace

// Past a few lines, longer inputs reach no new code and only slow the target.
constexpr size_t kMaxInput = 1024;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size = std::min(size, kMaxInput + 1);
  const DType dtype = static_cast<DType>(data[0] % 10);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::vector<Token> tokens;
  const Status walked = cli::ForEachTextValue(text, "in.csv", [&](std::string_view tok, uint64_t line) {
    tokens.push_back({tok, line});
    return Status::OK();
  });
  FUZZ_CHECK(walked.ok(), walked.ToString().c_str());
  const std::vector<Token> ref = ReferenceTokens(text);
  FUZZ_CHECK(tokens.size() == ref.size(), "token count differs from the reference split");
  for (size_t k = 0; k < ref.size(); ++k) {
    FUZZ_CHECK(tokens[k].text == ref[k].text, "token differs from the reference split");
    FUZZ_CHECK(tokens[k].line == ref[k].line, "token's line differs from the reference split");
  }

  for (const Token& tok : tokens) CheckValue(dtype, tok.text);
  CheckTable(dtype, text, tokens);
  return 0;
}
