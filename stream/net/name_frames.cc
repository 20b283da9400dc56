#include "stream/net/name_frames.h"

#include "stream/window/byte_codec.h"

namespace momenta {

std::string EncodeNames(const std::vector<ItemName>& names) {
  ByteWriter out;
  out.Varint(names.size());
  for (const ItemName& n : names) {
    out.Signed(n.item);
    out.Varint(n.name.size());
    out.Bytes(n.name);
  }
  return out.Take();
}

Result<std::vector<ItemName>> DecodeNames(std::string_view payload) {
  ByteReader in(payload, "names");
  uint64_t n = 0;
  MOMENTA_RETURN_IF_ERROR(in.Count(&n, 3));  // an item, a length and one byte at least
  if (n == 0) return in.Bad("no names");
  if (n > kMaxNamesPerFrame) return in.Bad("more than " + std::to_string(kMaxNamesPerFrame) + " names");
  std::vector<ItemName> out(n);
  for (ItemName& e : out) {
    uint64_t len = 0;
    std::string_view bytes;
    MOMENTA_RETURN_IF_ERROR(in.Signed(&e.item));
    MOMENTA_RETURN_IF_ERROR(in.Varint(&len));
    if (len == 0 || len > kMaxWireName) return in.Bad("a name of " + std::to_string(len) + " bytes");
    MOMENTA_RETURN_IF_ERROR(in.Bytes(len, &bytes));
    e.name.assign(bytes);
  }
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return out;
}

std::string_view WireName(std::string_view name) {
  if (name.size() <= kMaxWireName) return name;
  size_t end = kMaxWireName;
  // Back over continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
  return name.substr(0, end == 0 ? kMaxWireName : end);
}

}  // namespace momenta
