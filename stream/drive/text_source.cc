#include "stream/drive/text_source.h"

#include <fcntl.h>

#include <cerrno>
#include <optional>

#include "storage/util/parse_number.h"
#include "stream/window/window_spec.h"

namespace momenta {
namespace {

// The one word of `line` by the rule `one_word` names, or nullopt when the
// line has more than one (then it is "TIMESTAMP ITEM").
std::optional<std::string_view> OneWordOf(std::string_view line, OneWord one_word) {
  if (one_word == OneWord::kRefused) return std::nullopt;
  if (one_word == OneWord::kItemNow) {
    const size_t first = line.find_first_not_of(" \t");
    if (line.find_first_of(" \t", first) != std::string_view::npos) return std::nullopt;
    return line.substr(first);
  }
  const size_t first = line.find_first_not_of(" \t\r");
  const size_t gap = line.find_first_of(" \t", first);
  if (gap != std::string_view::npos && line.find_first_not_of(" \t\r", gap) != std::string_view::npos)
    return std::nullopt;
  std::string_view word = line.substr(first, gap == std::string_view::npos ? std::string_view::npos : gap - first);
  while (!word.empty() && word.back() == '\r') word.remove_suffix(1);
  return word;
}

}  // namespace

Result<std::unique_ptr<TextSource>> TextSource::Open(const std::string& path, ItemMapping mapping, OneWord one_word,
                                                     StopToken stop) {
  int fd = 0;
  if (path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(path, errno);
  }
  return std::make_unique<TextSource>(fd, path == "-" ? "stdin" : path, mapping, one_word, stop);
}

Status TextSource::ParseOneWord(std::string_view word, TimedItem* out) const {
  if (one_word_ == OneWord::kTimestamp) {
    if (!ParseInteger(word, &out->ts) || out->ts < -kMaxTime || out->ts > kMaxTime) {
      std::string message = "'";  // appended, not operator+ (GCC 12's -Wrestrict misfires on that)
      message.append(word).append("' is not a timestamp");
      return Status::InvalidArgument(lines_.where(), message);
    }
    out->has_item = false;
    out->name = std::string_view();
    return Status::OK();
  }
  auto it = mapping_.FromText(word);
  if (!it.ok()) return it.status().WithContext(lines_.where());
  out->ts = WallMillis();
  out->item = *it;
  out->has_item = true;
  out->name = mapping_.kind() == ItemMapping::Kind::kName ? word : std::string_view();
  return Status::OK();
}

Result<ItemSource::Got> TextSource::Next(TimedItem* out, std::chrono::milliseconds wait) {
  while (true) {
    std::string_view line;
    auto got = lines_.Next(&line, wait);
    if (!got.ok()) return got.status();
    if (*got == LineReader::Got::kEnd) return Got::kEnd;
    if (*got == LineReader::Got::kNothing) return Got::kNothing;
    // Blank lines and '#' comment lines (as in `query --ranges` files) carry nothing.
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (const auto word = OneWordOf(line, one_word_)) {
      MOMENTA_RETURN_IF_ERROR(ParseOneWord(*word, out));
      return Got::kItem;
    }
    std::string_view text;
    MOMENTA_RETURN_IF_ERROR(
        ParseTimedItem(line, mapping_, lines_.name(), lines_.line_number(), &out->ts, &out->item, &text));
    out->has_item = true;
    out->name = mapping_.kind() == ItemMapping::Kind::kName ? text : std::string_view();
    return Got::kItem;
  }
}

}  // namespace momenta
