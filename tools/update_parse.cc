#include "tools/update_parse.h"

#include <cstring>
#include <sstream>

#include "storage/cancel.h"
#include "storage/parse_number.h"

namespace momenta::cli {
namespace {

// OutOfRange naming the update unless index < length.
Status CheckIndex(uint64_t index, uint64_t length, const std::string& name, const std::string& where) {
  if (index >= length)
    return Status::OutOfRange(name, where + "index " + std::to_string(index) + " is outside the array (length " +
                                        std::to_string(length) + ")");
  return Status::OK();
}

}  // namespace

Result<std::optional<IndexedValue>> ParseUpdateLine(std::string line, uint64_t line_no, const std::string& name,
                                                   DType dtype, uint64_t length, int64_t time) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const size_t hash = line.find('#');
  if (hash != std::string::npos) line.resize(hash);
  std::istringstream fields(line);
  std::string index_text, value_text, time_text, extra;
  if (!(fields >> index_text)) return std::optional<IndexedValue>();  // blank
  const std::string where = "line " + std::to_string(line_no) + ": ";
  if (!(fields >> value_text) || ((fields >> time_text) && (fields >> extra)))
    return Status::InvalidArgument(name, where + "expected 'INDEX VALUE [TIME]'");
  int64_t line_time = time;
  if (!time_text.empty() && !ParseInteger(time_text, &line_time))
    return Status::InvalidArgument(name, where + "'" + time_text + "' is not a time in ms");
  uint64_t index = 0;
  if (!ParseInteger(index_text, &index))
    return Status::InvalidArgument(name, where + "'" + index_text + "' is not an index");
  MOMENTA_RETURN_IF_ERROR(CheckIndex(index, length, name, where));
  auto v = ParseValue(dtype, value_text);
  if (!v.ok()) return Status::InvalidArgument(name, where + v.status().ToString());
  return std::optional<IndexedValue>(IndexedValue{index, *v, line_time});
}

Result<std::vector<IndexedValue>> ParseUpdates(const std::string& text, bool binary, const std::string& name,
                                               DType dtype, uint64_t length, int64_t time) {
  std::vector<IndexedValue> out;
  if (binary) {
    if (text.size() % 16 != 0)
      return Status::InvalidArgument(name, "binary updates are 16-byte records (u64 index, f8 value); size " +
                                               std::to_string(text.size()) + " is not a multiple of 16");
    for (size_t at = 0; at < text.size(); at += 16) {
      uint64_t index;
      double value;
      std::memcpy(&index, text.data() + at, 8);
      std::memcpy(&value, text.data() + at + 8, 8);
      const std::string where = "record " + std::to_string(at / 16) + ": ";
      MOMENTA_RETURN_IF_ERROR(CheckIndex(index, length, name, where));
      auto v = ValueFromDouble(dtype, value);
      if (!v.ok()) return Status::InvalidArgument(name, where + v.status().ToString());
      out.push_back({index, *v, time});
    }
    return out;
  }
  std::istringstream in(text);
  std::string line;
  uint64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no % (1 << 16) == 0) MOMENTA_RETURN_IF_ERROR(CheckCancel(name));
    auto update = ParseUpdateLine(std::move(line), line_no, name, dtype, length, time);
    if (!update.ok()) return update.status();
    if (*update) out.push_back(**update);
  }
  return out;
}

}  // namespace momenta::cli
