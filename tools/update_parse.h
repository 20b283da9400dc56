// The input of `momenta update`: text lines "INDEX VALUE [TIME]" ('#' starts
// a comment, blank lines are skipped, a trailing '\r' is dropped) or, with
// --binary, 16-byte records (u64 index, f8 value, little-endian). Pure: no
// I/O (a stop signal is checked every 65536 lines); in momenta_cli_parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "buffers/buffered_array.h"
#include "storage/npy/dtype.h"
#include "storage/util/status.h"

namespace momenta::cli {

// Every update of `text`, in order, each value checked to fit `dtype`
// (ParseValue / ValueFromDouble) and each index to lie below `length`; a
// line without TIME gets `time`. All are parsed before any is applied, so a
// bad line changes nothing: InvalidArgument (a malformed line or a value
// that does not fit) or OutOfRange (an index), naming `name` and the line
// ("line 3: ...") or record; Interrupted on a stop signal.
// One text line of updates, number `line_no` of `name`: the update, or
// nullopt for a blank or comment-only line; errors as ParseUpdates'.
Result<std::optional<IndexedValue>> ParseUpdateLine(std::string_view line, uint64_t line_no, const std::string& name,
                                                    DType dtype, uint64_t length, int64_t time);

Result<std::vector<IndexedValue>> ParseUpdates(const std::string& text, bool binary, const std::string& name,
                                               DType dtype, uint64_t length, int64_t time);

}  // namespace momenta::cli
