// stream/protocol/messages.h: every message type round-trips through
// EncodeMessage/DecodeMessage exactly, with its word and bit charge; every
// truncation and every malformed payload is refused as Corruption.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stream/protocol/messages.h"
#include "tests/assert_ok.h"

namespace momenta {
namespace {

std::vector<Message> SampleMessages() {
  std::vector<Message> out;
  Message m;
  m.site = 3;
  m.tick = -17;
  m.type = MessageType::kBcDelta;
  m.delta = -5;
  out.push_back(m);
  m = {};
  m.type = MessageType::kAcSet;
  m.site = 70000;
  m.tick = int64_t{1} << 45;
  m.item = INT64_MIN;
  m.count = 12345;
  out.push_back(m);
  m = {};
  m.type = MessageType::kAcOff;
  m.item = INT64_MAX;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQSummary;
  m.count = 1000;
  m.pairs = {{INT64_MIN, 1}, {-3, 400}, {9, 400}, {INT64_MAX, 1000}};
  out.push_back(m);
  m = {};
  m.type = MessageType::kQCount;
  m.count = 99;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQLevel;
  m.item = 42;
  m.count = uint64_t{1} << 32;
  out.push_back(m);
  m = {};
  m.type = MessageType::kQDrop;
  m.item = -42;
  out.push_back(m);
  return out;
}

TEST(MessagesTest, RoundTripAndWords) {
  for (const Message& m : SampleMessages()) {
    const std::string bytes = EncodeMessage(m);
    auto back = DecodeMessage(bytes);
    ASSERT_OK(back);
    EXPECT_EQ(*back, m);
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      auto r = DecodeMessage(bytes.substr(0, cut));
      ASSERT_FALSE(r.ok()) << "prefix of " << cut << " bytes decoded";
      EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
    }
    EXPECT_FALSE(DecodeMessage(bytes + "x").ok());
  }
  EXPECT_EQ(MessageWords(SampleMessages()[3]), 2u + 2 * 4);
  EXPECT_EQ(MessageBits(SampleMessages()[0]), 7u);  // zigzag(-5) = 9: Elias-gamma 7 bits
}

TEST(MessagesTest, RefusesMalformed) {
  EXPECT_FALSE(DecodeMessage(std::string("\x09\x00\x00", 3)).ok());  // unknown type
  Message m;
  m.type = MessageType::kBcDelta;
  m.delta = 0;
  EXPECT_FALSE(DecodeMessage(EncodeMessage(m)).ok());  // a zero delta is never sent
  m = {};
  m.type = MessageType::kQSummary;
  m.count = 5;
  m.pairs = {{1, 3}, {2, 2}};  // ranks going down
  EXPECT_FALSE(DecodeMessage(EncodeMessage(m)).ok());
  m.pairs = {{1, 3}, {2, 9}};  // rank above n
  EXPECT_FALSE(DecodeMessage(EncodeMessage(m)).ok());
  // A count claiming more pairs than the bytes can hold allocates nothing big.
  std::string huge("\x04\x00\x00\x05\xff\xff\xff\xff\x0f", 9);
  auto r = DecodeMessage(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("Corruption: message:"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace momenta
