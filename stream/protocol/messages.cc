#include "stream/protocol/messages.h"

#include "stream/window/byte_codec.h"

namespace momenta {

Protocol ProtocolOf(MessageType type) {
  switch (type) {
    case MessageType::kBcDelta:
      return Protocol::kBasicCount;
    case MessageType::kAcSet:
    case MessageType::kAcOff:
      return Protocol::kApproxCount;
    case MessageType::kQSummary:
      return Protocol::kQuantileSummary;
    case MessageType::kQCount:
    case MessageType::kQLevel:
    case MessageType::kQDrop:
      return Protocol::kQuantileDrift;
  }
  return Protocol::kBasicCount;
}

const char* ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kBasicCount:
      return "basic_count";
    case Protocol::kApproxCount:
      return "approx_count";
    case Protocol::kQuantileSummary:
      return "quantile_summary";
    case Protocol::kQuantileDrift:
      return "quantile_drift";
  }
  return "?";
}

uint64_t MessageWords(const Message& m) {
  switch (m.type) {
    case MessageType::kBcDelta:
      return 1;
    case MessageType::kAcSet:
      return 2;
    case MessageType::kAcOff:
      return 1;
    case MessageType::kQSummary:
      return 2 + 2 * m.pairs.size();
    case MessageType::kQCount:
      return 1;
    case MessageType::kQLevel:
      return 2;
    case MessageType::kQDrop:
      return 1;
  }
  return 0;
}

uint64_t MessageBits(const Message& m) {
  if (m.type == MessageType::kBcDelta) return static_cast<uint64_t>(EliasGammaBits(ZigZag(m.delta)));
  return 64 * MessageWords(m);
}

std::string EncodeMessage(const Message& m) {
  ByteWriter out;
  out.U8(static_cast<uint8_t>(m.type));
  out.Varint(m.site);
  out.Signed(m.tick);
  switch (m.type) {
    case MessageType::kBcDelta:
      out.Signed(m.delta);
      break;
    case MessageType::kAcSet:
      out.Signed(m.item);
      out.Varint(m.count);
      break;
    case MessageType::kAcOff:
    case MessageType::kQDrop:
      out.Signed(m.item);
      break;
    case MessageType::kQCount:
      out.Varint(m.count);
      break;
    case MessageType::kQLevel:
      out.Signed(m.item);
      out.Varint(m.count);
      break;
    case MessageType::kQSummary: {
      out.Varint(m.count);
      out.Varint(m.pairs.size());
      for (size_t i = 0; i < m.pairs.size(); ++i) {
        if (i == 0) {
          out.Signed(m.pairs[i].value);
        } else {
          out.Varint(static_cast<uint64_t>(m.pairs[i].value) - static_cast<uint64_t>(m.pairs[i - 1].value));
        }
        out.Varint(m.pairs[i].rank);
      }
      break;
    }
  }
  return out.Take();
}

Result<Message> DecodeMessage(std::string_view bytes) {
  ByteReader in(bytes, "message");
  Message m;
  uint8_t type = 0;
  uint64_t site = 0;
  MOMENTA_RETURN_IF_ERROR(in.U8(&type));
  if (type < 1 || type > 7) return in.Bad("unknown message type " + std::to_string(type));
  m.type = static_cast<MessageType>(type);
  MOMENTA_RETURN_IF_ERROR(in.Varint(&site));
  if (site > UINT32_MAX) return in.Bad("site id out of range");
  m.site = static_cast<uint32_t>(site);
  MOMENTA_RETURN_IF_ERROR(in.Signed(&m.tick));
  switch (m.type) {
    case MessageType::kBcDelta:
      MOMENTA_RETURN_IF_ERROR(in.Signed(&m.delta));
      if (m.delta == 0) return in.Bad("zero level delta");
      break;
    case MessageType::kAcSet:
      MOMENTA_RETURN_IF_ERROR(in.Signed(&m.item));
      MOMENTA_RETURN_IF_ERROR(in.Varint(&m.count));
      break;
    case MessageType::kAcOff:
    case MessageType::kQDrop:
      MOMENTA_RETURN_IF_ERROR(in.Signed(&m.item));
      break;
    case MessageType::kQCount:
      MOMENTA_RETURN_IF_ERROR(in.Varint(&m.count));
      break;
    case MessageType::kQLevel:
      MOMENTA_RETURN_IF_ERROR(in.Signed(&m.item));
      MOMENTA_RETURN_IF_ERROR(in.Varint(&m.count));
      if (m.count > (uint64_t{1} << 32)) return in.Bad("level above 1");
      break;
    case MessageType::kQSummary: {
      uint64_t pairs = 0;
      MOMENTA_RETURN_IF_ERROR(in.Varint(&m.count));
      MOMENTA_RETURN_IF_ERROR(in.Count(&pairs, 2));
      m.pairs.resize(pairs);
      for (uint64_t i = 0; i < pairs; ++i) {
        if (i == 0) {
          MOMENTA_RETURN_IF_ERROR(in.Signed(&m.pairs[i].value));
        } else {
          uint64_t gap = 0;
          MOMENTA_RETURN_IF_ERROR(in.Varint(&gap));
          if (gap == 0) return in.Bad("summary values out of order");
          m.pairs[i].value = static_cast<int64_t>(static_cast<uint64_t>(m.pairs[i - 1].value) + gap);
          if (m.pairs[i].value <= m.pairs[i - 1].value) return in.Bad("summary values out of order");
        }
        MOMENTA_RETURN_IF_ERROR(in.Varint(&m.pairs[i].rank));
        if (m.pairs[i].rank > m.count || (i > 0 && m.pairs[i].rank < m.pairs[i - 1].rank))
          return in.Bad("summary ranks out of order");
      }
      break;
    }
  }
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return m;
}

}  // namespace momenta
