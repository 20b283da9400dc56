#include "tools/text_table.h"

#include <algorithm>

#include "storage/util/cancel.h"
#include "tools/cli_parse.h"
#include "tools/text_values.h"

namespace momenta::cli {
namespace {

// Calls fn(line without its '\n', line number from 1) for each line of text.
template <typename Fn>
Status ForEachLine(std::string_view text, const std::string& name, Fn&& fn) {
  uint64_t number = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (++number % (1 << 16) == 0) MOMENTA_RETURN_IF_ERROR(CheckCancel(name));
    MOMENTA_RETURN_IF_ERROR(fn(text.substr(at, end - at), number));
    at = end + 1;
  }
  return Status::OK();
}

// Calls fn(token, index from 0) for the value tokens of one line (no '\n'),
// as ForEachTextValue splits them (no vector: a line may hold millions);
// returns how many there are, or fn's first error.
template <typename Fn>
Result<uint64_t> ForEachToken(std::string_view line, Fn&& fn) {
  uint64_t index = 0;
  MOMENTA_RETURN_IF_ERROR(
      ForEachTextValue(line, std::string(), [&](std::string_view token, uint64_t) { return fn(token, index++); }));
  return index;
}

// The number of value tokens of a line, and whether one of them is a number.
struct LineCount {
  uint64_t tokens = 0;
  bool any_number = false;
};
LineCount CountTokens(std::string_view line) {
  LineCount c;
  c.tokens = ForEachToken(line, [&](std::string_view t, uint64_t) {
               c.any_number = c.any_number || ParseValue(DType::kF8, t).ok();
               return Status::OK();
             }).value();
  return c;
}

std::string Values(uint64_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// --column as an index of the table's first row: J from 0 (or from -1 at the
// end), or a name of its header.
Result<uint64_t> ResolveColumn(const std::string& column, const TextTable& t, const std::string& name) {
  const std::string flag = "--column " + column;
  if (auto j = ParseIndex(column, "--column"); j.ok()) {  // negative counts from the end, as in NumPy
    const int64_t k = static_cast<int64_t>(t.columns);
    if (*j >= k || *j < -k)
      return Status::InvalidArgument(name, flag + ": the rows have " + Values(t.columns) + " (columns 0 to " +
                                               std::to_string(t.columns - 1) + ", or -1 to -" +
                                               std::to_string(t.columns) + " from the end)");
    return static_cast<uint64_t>(*j < 0 ? *j + k : *j);
  }
  if (t.names.empty())
    return Status::InvalidArgument(name, flag +
                                             " is a name, but there is no header line (a first line of names, "
                                             "or --skip-rows N with the names on line N); or give an index J from 0");
  const auto at = std::find(t.names.begin(), t.names.end(), column);
  const std::string header = "the header on line " + std::to_string(t.header_line);
  if (at == t.names.end())
    return Status::InvalidArgument(name, flag + ": no such name in " + header + " (" + JoinNames(t.names) + ")");
  if (t.names.size() != t.columns)
    return Status::InvalidArgument(name, flag + ": " + header + " has " + std::to_string(t.names.size()) +
                                             " names, but the rows have " + Values(t.columns));
  return static_cast<uint64_t>(at - t.names.begin());
}

Status CheckValue(DType dtype, std::string_view token, uint64_t line, const std::string& name) {
  auto v = ParseValue(dtype, token);
  if (!v.ok()) return v.status().WithContext(name + ": line " + std::to_string(line));
  return Status::OK();
}

}  // namespace

std::vector<uint64_t> TextTable::Shape() const {
  if (rows == 0) return {0};
  if (pick || columns == 1) return {rows};
  if (rows == 1) return {columns};
  return {rows, columns};
}

std::vector<std::string> SplitHeader(std::string_view line) {
  line = line.substr(0, line.find('#'));
  const bool delimited = line.find_first_of(",;\t") != std::string_view::npos;
  const std::string_view seps = delimited ? std::string_view(",;\t") : std::string_view(" ");
  std::vector<std::string> names;
  for (size_t at = 0; at <= line.size();) {
    const size_t end = std::min(line.find_first_of(seps, at), line.size());
    std::string_view n = line.substr(at, end - at);
    at = end + 1;
    const size_t b = n.find_first_not_of(" \r");
    n = b == std::string_view::npos ? std::string_view() : n.substr(b, n.find_last_not_of(" \r") - b + 1);
    if (n.size() >= 2 && n.front() == '"' && n.back() == '"') n = n.substr(1, n.size() - 2);
    if (!n.empty() || delimited) names.emplace_back(n);
  }
  return names;
}

Result<TextTable> ScanTextTable(std::string_view text, DType dtype, const std::string& name,
                                const TextTableOptions& opts) {
  TextTable t;
  t.first_line = opts.skip_rows + 1;
  t.header_line = opts.skip_rows;
  uint64_t first_row_line = 0;
  MOMENTA_RETURN_IF_ERROR(ForEachLine(text, name, [&](std::string_view line, uint64_t number) -> Status {
    if (number < t.first_line) {
      if (number == opts.skip_rows) t.names = SplitHeader(line);
      return Status::OK();
    }
    if (t.rows == 0) {  // the first row: or a header, and what --column names
      const LineCount c = CountTokens(line);
      if (c.tokens == 0) return Status::OK();
      if (!c.any_number && !t.header_detected) {
        t.header_detected = true;
        t.header_line = number;
        t.first_line = number + 1;
        t.names = SplitHeader(line);
        return Status::OK();
      }
      t.columns = c.tokens;
      first_row_line = number;
      if (!opts.column.empty()) {
        auto j = ResolveColumn(opts.column, t, name);
        if (!j.ok()) return j.status();
        t.pick = *j;
      }
    }
    auto tokens = ForEachToken(line, [&](std::string_view tok, uint64_t index) {
      return t.pick && index != *t.pick ? Status::OK() : CheckValue(dtype, tok, number, name);
    });
    if (!tokens.ok()) return tokens.status();
    if (*tokens == 0) return Status::OK();
    if (*tokens != t.columns)
      return Status::InvalidArgument(name, "line " + std::to_string(number) + " has " + Values(*tokens) +
                                               ", but the first row (line " + std::to_string(first_row_line) +
                                               ") has " + std::to_string(t.columns) +
                                               ": every row must have the same number of values");
    ++t.rows;
    return Status::OK();
  }));
  return t;
}

Status ForEachTableValue(std::string_view text, const TextTable& table, const std::string& name,
                         const std::function<Status(std::string_view, uint64_t)>& fn) {
  return ForEachLine(text, name, [&](std::string_view line, uint64_t number) -> Status {
    if (number < table.first_line) return Status::OK();
    return ForEachToken(line,
                        [&](std::string_view tok, uint64_t index) {
                          return table.pick && index != *table.pick ? Status::OK() : fn(tok, number);
                        })
        .status();
  });
}

}  // namespace momenta::cli
