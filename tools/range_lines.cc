#include "tools/range_lines.h"

#include <string>

#include "tools/cli_parse.h"

namespace momenta::cli {
namespace {

// A cursor over one NDJSON object: just what a range line needs (strings
// without escapes, integers, arrays of them).
class JsonCursor {
 public:
  JsonCursor(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  void SkipSpace() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\r')) ++at_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return at_ == text_.size();
  }
  char Peek() {
    SkipSpace();
    return at_ < text_.size() ? text_[at_] : '\0';
  }
  Result<std::string> String() {
    if (!Eat('"')) return Error("expected a string");
    const size_t end = text_.find('"', at_);
    if (end == std::string_view::npos) return Error("a string does not end");
    std::string s(text_.substr(at_, end - at_));
    if (s.find('\\') != std::string::npos) return Error("escapes in strings are not supported");
    at_ = end + 1;
    return s;
  }
  // An optionally signed whole number, as text.
  Result<std::string> Integer() {
    SkipSpace();
    const size_t begin = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    if (at_ == begin || (at_ == begin + 1 && text_[begin] == '-')) return Error("expected an integer");
    return std::string(text_.substr(begin, at_ - begin));
  }
  const std::string& where() const { return where_; }
  Status Error(const std::string& what) const {
    return Status::InvalidArgument(where_, what + " at column " + std::to_string(at_ + 1));
  }

 private:
  std::string_view text_;
  const std::string& where_;
  size_t at_ = 0;
};

Result<std::vector<Stat>> ParseStatField(JsonCursor& in) {
  std::vector<Stat> stats;
  const bool list = in.Eat('[');
  do {
    if (list && in.Peek() == ']') break;
    auto name = in.String();
    if (!name.ok()) return name.status();
    auto stat = ParseStat(*name, in.where() + ": \"stat\"");
    if (!stat.ok()) return stat.status();
    stats.push_back(*stat);
  } while (list && in.Eat(','));
  if (list && !in.Eat(']')) return in.Error("expected ',' or ']' in \"stat\"");
  if (stats.empty()) return in.Error("\"stat\" names no statistic");
  return stats;
}

// "range": [P, Q] or "P:Q", as the text ParseRange reads.
Result<std::string> ParseRangeField(JsonCursor& in) {
  if (in.Peek() == '"') return in.String();
  if (!in.Eat('[')) return in.Error("\"range\" must be [P, Q] or \"P:Q\"");
  auto p = in.Integer();
  if (!p.ok()) return p.status();
  if (!in.Eat(',')) return in.Error("expected ',' in \"range\"");
  auto q = in.Integer();
  if (!q.ok()) return q.status();
  if (!in.Eat(']')) return in.Error("\"range\" must hold two integers");
  return *p + ":" + *q;
}

Result<RangeLine> ParseObject(std::string_view line, uint64_t length, const std::string& where) {
  JsonCursor in(line, where);
  in.Eat('{');
  RangeLine out;
  std::optional<std::string> range;
  if (!in.Eat('}')) {
    do {
      auto key = in.String();
      if (!key.ok()) return key.status();
      if (!in.Eat(':')) return in.Error("expected ':' after \"" + *key + "\"");
      if (*key == "range" && !range) {
        auto r = ParseRangeField(in);
        if (!r.ok()) return r.status();
        range = *r;
      } else if (*key == "stat" && !out.stats) {
        auto s = ParseStatField(in);
        if (!s.ok()) return s.status();
        out.stats = *s;
      } else {
        return in.Error(*key == "range" || *key == "stat" ? "\"" + *key + "\" given twice"
                                                          : "unknown field \"" + *key + "\" (range, stat)");
      }
    } while (in.Eat(','));
    if (!in.Eat('}')) return in.Error("expected ',' or '}'");
  }
  if (!in.AtEnd()) return in.Error("text after the object");
  if (!range) return Status::InvalidArgument(where, "the object has no \"range\"");
  auto r = ParseRange(*range, length, where);
  if (!r.ok()) return r.status();
  out.range = *r;
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<RangeLine> ParseRangeLine(std::string_view line, uint64_t length, const std::string& where) {
  line = Trim(line);
  if (line.empty() || line.front() == '#') return RangeLine{true, {}, std::nullopt};
  if (line.front() == '{') return ParseObject(line, length, where);
  auto r = ParseRange(line, length, where);
  if (!r.ok()) return r.status();
  return RangeLine{false, *r, std::nullopt};
}

}  // namespace momenta::cli
