#include "stream/window/item_mapping.h"

#include <cmath>

#include "storage/util/parse_number.h"
#include "stream/window/window_spec.h"

namespace momenta {

namespace {

// "'text' why" (built by appending: GCC 12 warns falsely on operator+ chains).
std::string Quoted(std::string_view text, std::string_view why) {
  std::string s;
  s.reserve(text.size() + why.size() + 3);
  s += '\'';
  s.append(text);
  s += "' ";
  s.append(why);
  return s;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Result<ItemMapping> ItemMapping::Parse(std::string_view text, const std::string& what) {
  ItemMapping m;
  auto bad = [&](const std::string& why) { return Status::InvalidArgument(what, Quoted(text, why)); };
  const size_t slash = text.find('/');
  const std::string_view kind = text.substr(0, slash);
  const std::string_view grid = slash == std::string_view::npos ? std::string_view() : text.substr(slash + 1);
  if (kind == "index") {
    m.kind_ = Kind::kIndex;
    if (slash != std::string_view::npos) {
      int64_t g = 0;
      if (!ParseInteger(grid, &g) || g < 1) return bad("needs a positive integer group size after 'index/'");
      m.index_group_ = static_cast<uint64_t>(g);
    }
    return m;
  }
  if (kind == "value") {
    m.kind_ = Kind::kValue;
    double g = 0;
    if (slash == std::string_view::npos || !ParseReal(grid, &g) || !(g > 0) || !std::isfinite(g))
      return bad("needs a positive grid width after 'value/'");
    m.value_grid_ = g;
    return m;
  }
  if (text == "name") {
    m.kind_ = Kind::kName;
    return m;
  }
  return bad("is not index, index/G, value/G or name");
}

std::string ItemMapping::ToString() const {
  if (kind_ == Kind::kIndex) return index_group_ == 1 ? "index" : "index/" + std::to_string(index_group_);
  if (kind_ == Kind::kName) return "name";
  char buf[64];
  std::snprintf(buf, sizeof buf, "value/%g", value_grid_);
  return buf;
}

int64_t ItemMapping::FromIndex(uint64_t index) const { return static_cast<int64_t>(index / index_group_); }

bool ItemMapping::FromValue(double value, int64_t* item) const {
  const double cell = std::floor(value / value_grid_);
  if (!std::isfinite(cell) || cell < -9.2e18 || cell > 9.2e18) return false;
  *item = static_cast<int64_t>(cell);
  return true;
}

int64_t NameItem(std::string_view name) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  h ^= h >> 30;  // splitmix64's finalizer: every input bit moves every output bit
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<int64_t>(h);
}

Result<int64_t> ItemMapping::FromText(std::string_view text) const {
  if (kind_ == Kind::kName) return NameItem(text);
  if (kind_ == Kind::kIndex) {
    int64_t v = 0;
    if (!ParseInteger(text, &v))
      return Status::InvalidArgument("", Quoted(text, "is not an integer (to count words as items: --item name)"));
    return index_group_ == 1 ? v : FloorDiv(v, static_cast<int64_t>(index_group_));
  }
  double v = 0;
  int64_t item = 0;
  if (!ParseReal(text, &v)) return Status::InvalidArgument("", Quoted(text, "is not a number"));
  if (!FromValue(v, &item)) return Status::InvalidArgument("", Quoted(text, "has no cell on the grid"));
  return item;
}

Status ParseTimedItem(std::string_view line, const ItemMapping& mapping, const std::string& context,
                      uint64_t line_number, int64_t* ts, int64_t* item, std::string_view* item_text) {
  const std::string where = context + ":" + std::to_string(line_number);
  auto skip = [&](size_t i) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    return i;
  };
  size_t a = skip(0), b = a;
  while (b < line.size() && line[b] != ' ' && line[b] != '\t') ++b;
  size_t c = skip(b), d = c;
  while (d < line.size() && line[d] != ' ' && line[d] != '\t' && line[d] != '\r') ++d;
  if (a == b || c == d || skip(d) != line.size()) return Status::InvalidArgument(where, "expected 'TIMESTAMP ITEM'");
  if (!ParseInteger(line.substr(a, b - a), ts) || *ts < -kMaxTime || *ts > kMaxTime)
    return Status::InvalidArgument(where, Quoted(line.substr(a, b - a), "is not a timestamp"));
  auto it = mapping.FromText(line.substr(c, d - c));
  if (!it.ok()) return it.status().WithContext(where);
  *item = *it;
  if (item_text != nullptr) *item_text = line.substr(c, d - c);
  return Status::OK();
}

}  // namespace momenta
