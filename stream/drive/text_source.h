// "TIMESTAMP ITEM" lines from a file or a pipe (blank lines and lines whose
// first non-blank character is '#' skipped), each
// parsed by ParseTimedItem (stream/window/item_mapping.h), the one parser of
// that form. What a line of one word means depends on the clock the input
// runs on, so the reader says (OneWord).
#pragma once

#include <memory>
#include <string>

#include "storage/util/line_reader.h"
#include "stream/drive/item_source.h"
#include "stream/window/item_mapping.h"

namespace momenta {

enum class OneWord {
  kRefused,         // an error: "expected 'TIMESTAMP ITEM'"
  kItemNow,         // an ITEM stamped with the wall clock, if nothing follows
                    // it (a trailing blank or CR makes the line two words:
                    // how `momenta window --clock wall` has always read it)
  kItemNowTrimmed,  // an ITEM stamped with the wall clock, blanks and CR
                    // around it ignored (how `momenta site --clock wall` reads it)
  kTimestamp,       // a bare TIMESTAMP: the clock moves on with no item
};

class TextSource : public ItemSource {
 public:
  // The file at `path`, or stdin for "-" (named "stdin" in errors); IOError
  // naming the path when it cannot be opened.
  static Result<std::unique_ptr<TextSource>> Open(const std::string& path, ItemMapping mapping, OneWord one_word,
                                                  StopToken stop);
  // Owns `fd` (see LineReader); `name` names it in errors ("stdin", a path).
  TextSource(int fd, std::string name, ItemMapping mapping, OneWord one_word, StopToken stop)
      : lines_(fd, std::move(name), stop), mapping_(mapping), one_word_(one_word) {}
  Result<Got> Next(TimedItem* out, std::chrono::milliseconds wait) override;

 private:
  // *out from a line with one word, `word` (its blanks trimmed as one_word_ says).
  Status ParseOneWord(std::string_view word, TimedItem* out) const;

  LineReader lines_;
  const ItemMapping mapping_;
  const OneWord one_word_;
};

}  // namespace momenta
