#include "tools/update_parse.h"

#include <cstring>
#include <string_view>

#include "storage/io/huge_pages.h"
#include "storage/util/cancel.h"
#include "storage/util/parse_number.h"

namespace momenta::cli {
namespace {

// OutOfRange naming the update unless index < length; `where` is called only
// to build the message.
template <typename Where>
Status CheckIndex(uint64_t index, uint64_t length, const std::string& name, const Where& where) {
  if (index < length) return Status::OK();
  return Status::OutOfRange(name, where() + "index " + std::to_string(index) + " is outside the array (length " +
                                      std::to_string(length) + ")");
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// The next whitespace-separated field of *rest (empty at the end), which is
// advanced past it.
std::string_view NextField(std::string_view* rest) {
  size_t b = 0;
  while (b < rest->size() && IsSpace((*rest)[b])) ++b;
  size_t e = b;
  while (e < rest->size() && !IsSpace((*rest)[e])) ++e;
  const std::string_view field = rest->substr(b, e - b);
  rest->remove_prefix(e);
  return field;
}

}  // namespace

Result<std::optional<IndexedValue>> ParseUpdateLine(std::string_view line, uint64_t line_no, const std::string& name,
                                                    DType dtype, uint64_t length, int64_t time) {
  if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::string_view rest = line;
  const std::string_view index_text = NextField(&rest);
  if (index_text.empty()) return std::optional<IndexedValue>();  // blank
  const std::string_view value_text = NextField(&rest);
  const std::string_view time_text = NextField(&rest);
  auto where = [&] { return "line " + std::to_string(line_no) + ": "; };
  if (value_text.empty() || !NextField(&rest).empty())
    return Status::InvalidArgument(name, where() + "expected 'INDEX VALUE [TIME]'");
  int64_t line_time = time;
  if (!time_text.empty() && !ParseInteger(time_text, &line_time))
    return Status::InvalidArgument(name, where() + "'" + std::string(time_text) + "' is not a time in ms");
  uint64_t index = 0;
  if (!ParseInteger(index_text, &index))
    return Status::InvalidArgument(name, where() + "'" + std::string(index_text) + "' is not an index");
  MOMENTA_RETURN_IF_ERROR(CheckIndex(index, length, name, where));
  auto v = ParseValue(dtype, value_text);
  if (!v.ok()) return v.status().WithContext(name + ": line " + std::to_string(line_no));
  return std::optional<IndexedValue>(IndexedValue{index, *v, line_time});
}

Result<std::vector<IndexedValue>> ParseUpdates(const std::string& text, bool binary, const std::string& name,
                                               DType dtype, uint64_t length, int64_t time) {
  std::vector<IndexedValue> out;
  if (binary) {
    if (text.size() % 16 != 0)
      return Status::InvalidArgument(name, "binary updates are 16-byte records (u64 index, f8 value); size " +
                                               std::to_string(text.size()) + " is not a multiple of 16");
    out.reserve(text.size() / 16);
    AdviseHugePages(out.data(), out.capacity() * sizeof(IndexedValue));
    for (size_t at = 0; at < text.size(); at += 16) {
      uint64_t index;
      double value;
      std::memcpy(&index, text.data() + at, 8);
      std::memcpy(&value, text.data() + at + 8, 8);
      auto where = [&] { return "record " + std::to_string(at / 16) + ": "; };
      MOMENTA_RETURN_IF_ERROR(CheckIndex(index, length, name, where));
      auto v = ValueFromDouble(dtype, value);
      if (!v.ok()) return v.status().WithContext(name + ": record " + std::to_string(at / 16));
      out.push_back({index, *v, time});
    }
    return out;
  }
  const std::string_view all = text;
  uint64_t line_no = 0;
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\n', at);
    if (end == std::string_view::npos) end = all.size();
    ++line_no;
    if (line_no % (1 << 16) == 0) MOMENTA_RETURN_IF_ERROR(CheckCancel(name));
    auto update = ParseUpdateLine(all.substr(at, end - at), line_no, name, dtype, length, time);
    if (!update.ok()) return update.status();
    if (*update) out.push_back(**update);
    at = end + 1;
  }
  return out;
}

}  // namespace momenta::cli
