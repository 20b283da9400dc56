// The tokens of `momenta import`'s text/CSV input (its rows and columns:
// tools/text_table.h): values separated by
// commas, semicolons, blanks, tabs, '\r' or newlines; '#' starts a comment
// that runs to the end of its line. Each value is one token, parsed by
// ParseValue (storage/npy/dtype.h) for the array's dtype. Pure: no I/O (a stop
// signal is checked every 65536 lines); header-only, used by the table reader
// (tools/text_table.h) and the fuzz target `text`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/npy/dtype.h"
#include "storage/util/cancel.h"
#include "storage/util/status.h"

namespace momenta::cli {

// The bytes that end a token (besides '#', which also starts a comment).
// Not NUL: a NUL byte is part of its token, which then fails to parse.
inline bool IsTextValueSeparator(char c) {
  return c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Calls fn(token, line_number) -> Status for every value token of `text`,
// in order (line numbers from 1), stopping at fn's first error. A token is
// never empty and holds none of the separators or '#' (it may hold a NUL
// byte, and then does not parse). A stop signal ends it with Interrupted
// naming `name`.
template <typename Fn>
Status ForEachTextValue(std::string_view text, const std::string& name, Fn&& fn) {
  uint64_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      if (++line % (1 << 16) == 0) MOMENTA_RETURN_IF_ERROR(CheckCancel(name));
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < n && text[i] != '\n') ++i;
      continue;
    }
    if (IsTextValueSeparator(c)) {
      ++i;
      continue;
    }
    // (Not strchr over the separators: it finds a NUL byte too, as the
    // string's terminator, which made an empty token and no progress.)
    size_t j = i;
    while (j < n && !IsTextValueSeparator(text[j]) && text[j] != '#') ++j;
    MOMENTA_RETURN_IF_ERROR(fn(text.substr(i, j - i), line));
    i = j;
  }
  return Status::OK();
}

}  // namespace momenta::cli
