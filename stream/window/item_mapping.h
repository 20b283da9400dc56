// ItemMapping: what counts as "the item" of an update or an input line.
//   index      the element index (or the integer on the line)
//   index/G    that index floor-divided by G: regions of G elements
//   value/G    the value written, floor(value / G): a grid of width G
//   name       the ITEM text itself (input lines only), counted by NameItem,
//              a 64-bit hash: two names with one hash count as one item
// Items are int64; floor division keeps negative values on their own cells.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

class ItemMapping {
 public:
  enum class Kind { kIndex, kValue, kName };

  // "index", "index/G" (G a positive integer), "value/G" (G a positive
  // number) or "name"; otherwise InvalidArgument naming `what`, the caller's word for
  // where the text came from ("Invalid argument: --item: ..." from the CLI).
  static Result<ItemMapping> Parse(std::string_view text, const std::string& what);

  Kind kind() const { return kind_; }
  std::string ToString() const;

  // The item of an update of element `index` (kIndex mappings).
  int64_t FromIndex(uint64_t index) const;
  // The item of a value (kValue mappings); nullopt-like false for NaN and
  // values whose cell does not fit int64.
  bool FromValue(double value, int64_t* item) const;
  // The item of an input line's ITEM field, by the mapping's kind; names the
  // problem ("'x' is not an integer") when it does not parse.
  Result<int64_t> FromText(std::string_view text) const;

 private:
  Kind kind_ = Kind::kIndex;
  uint64_t index_group_ = 1;
  double value_grid_ = 1;
};

// The item a name is counted as: a 64-bit hash of its bytes (FNV-1a, then
// the splitmix64 finalizer), the same on every machine and in every run.
int64_t NameItem(std::string_view name);

// Splits "TIMESTAMP ITEM" (blank-separated; TIMESTAMP an integer) and maps
// the item; *item_text, when given, is the ITEM field (a view into `line`).
// Errors read "<context>:<line>: ...".
Status ParseTimedItem(std::string_view line, const ItemMapping& mapping, const std::string& context,
                      uint64_t line_number, int64_t* ts, int64_t* item, std::string_view* item_text = nullptr);

}  // namespace momenta
