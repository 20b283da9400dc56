// The payload of SNAPSHOT and BATCH frames (wire_frame.h): the site's clock
// and protocol messages (messages.h), each with its length.
//
//   zig-zag clock | varint n | n x (varint length | EncodeMessage bytes)
//
// A BATCH carries the messages of the ticks since the previous frame, and
// says the site has reached `clock` (n may be 0: a clock-only frame). A
// SNAPSHOT carries messages that rebuild the site's whole state from nothing
// (site_mirror.h). A message's tick never exceeds the frame's clock.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"
#include "stream/protocol/messages.h"

namespace momenta {

struct Batch {
  int64_t clock = 0;
  std::vector<Message> messages;
};

std::string EncodeBatch(int64_t clock, const std::vector<Message>& messages);
// Corruption for a malformed payload or a message stamped after the clock.
Result<Batch> DecodeBatch(std::string_view payload);

}  // namespace momenta
