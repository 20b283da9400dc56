// The payload of NAMES frames (protocol version 4, site -> root): the names
// of items counted by their hash (ItemMapping "name", NameItem), so that the
// root's answers can say them.
//
//   varint n | n x (zig-zag item | varint length | name bytes)
//
// A name is 1..kMaxWireName bytes (a site cuts a longer one there: only what
// is shown is cut, the item is the hash of the whole name). A NAMES frame
// carries at most kMaxNamesPerFrame names; a site with more sends several.
// A site sends an item's name in a NAMES frame before the first frame on
// its connection whose messages name that item (wire_batch.h), and again
// after the item left its state and came back, so the root has the name of
// every item a site holds (root_names.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/util/status.h"

namespace momenta {

inline constexpr size_t kMaxWireName = 256;
inline constexpr size_t kMaxNamesPerFrame = 4096;  // <= ~1.1 MiB: under the root's payload cap
// The first protocol version (HELLO) whose sites may send NAMES.
inline constexpr uint32_t kNamesProtocolVersion = 4;

struct ItemName {
  int64_t item = 0;
  std::string name;
  bool operator==(const ItemName&) const = default;
};

// REQUIRES: names.size() <= kMaxNamesPerFrame, each name 1..kMaxWireName bytes
std::string EncodeNames(const std::vector<ItemName>& names);
// Corruption for anything EncodeNames could not have produced (no names, too
// many, an empty or too long name, trailing bytes).
Result<std::vector<ItemName>> DecodeNames(std::string_view payload);
// `name` cut to kMaxWireName bytes (never in the middle of a UTF-8 sequence).
std::string_view WireName(std::string_view name);

}  // namespace momenta
