// The messages a site sends its root, as values (over TCP they travel
// batched, wire_batch.h, in frames, wire_frame.h), and what each costs: words
// (an item, value, count or rank is one word), the bits of basic counting's
// level delta, and encoded bytes.
//
// Encoding (byte_codec.h): u8 type | varint site | zig-zag tick | payload
//   kBcDelta   zig-zag level delta d (d != 0)             1 word; Elias-gamma bits of zigzag(d)
//   kAcSet     zig-zag item | varint count in half units  2 words
//   kAcOff     zig-zag item                               1 word
//   kQSummary  varint n | varint m | m x (value, rank)    2 + 2m words   (whole-summary rule)
//   kQCount    varint n                                   1 word         (drift rule)
//   kQLevel    zig-zag value | varint level (2^32 = 1.0)  2 words        (drift rule)
//   kQDrop     zig-zag value                              1 word         (drift rule)
// Values in a summary ascend and are sent as gaps after the first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/util/status.h"

namespace momenta {

enum class MessageType : uint8_t {
  kBcDelta = 1,
  kAcSet = 2,
  kAcOff = 3,
  kQSummary = 4,
  kQCount = 5,
  kQLevel = 6,
  kQDrop = 7,
};

struct RankPair {
  int64_t value = 0;
  uint64_t rank = 0;
  bool operator==(const RankPair&) const = default;
};

struct Message {
  MessageType type = MessageType::kBcDelta;
  uint32_t site = 0;
  int64_t tick = 0;
  int64_t delta = 0;            // kBcDelta
  int64_t item = 0;             // kAcSet, kAcOff; the value of kQLevel, kQDrop
  uint64_t count = 0;           // kAcSet (half units), kQSummary n, kQCount n, kQLevel level
  std::vector<RankPair> pairs;  // kQSummary, ascending values
  bool operator==(const Message&) const = default;
};

// The protocol a message belongs to (for per-protocol accounting).
enum class Protocol : uint8_t { kBasicCount, kApproxCount, kQuantileSummary, kQuantileDrift };
Protocol ProtocolOf(MessageType type);
const char* ProtocolName(Protocol p);

uint64_t MessageWords(const Message& m);
// Basic counting's charge in bits (Elias-gamma of the zig-zag delta); for
// other types, 64 bits per word.
uint64_t MessageBits(const Message& m);

std::string EncodeMessage(const Message& m);
// Corruption for anything EncodeMessage could not have produced.
Result<Message> DecodeMessage(std::string_view bytes);

}  // namespace momenta
