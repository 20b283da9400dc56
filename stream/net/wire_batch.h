// The payload of SNAPSHOT and BATCH frames (wire_frame.h): the site's clock
// and protocol messages (messages.h), each with its length.
//
//   zig-zag clock | varint n | n x (varint length | EncodeMessage bytes)
//
// A BATCH carries the messages of the ticks since the previous frame, and
// says the site has reached `clock` (n may be 0: a clock-only frame). A
// SNAPSHOT carries messages that rebuild the site's whole state from nothing
// (site_mirror.h). A message's tick never exceeds the frame's clock.
//
// FINAL (protocol version 3) says the site's input has ended:
//
//   zig-zag last time | the BATCH payload above
//
// `last time` is the site's clock when its input ended (-2^61: it never had
// one); the batch is the drain that follows (its windows emptying with no
// arrivals, messages stamped after the last time) up to `clock`, where the
// site's windows are empty. Its state at every time after `clock` is the one
// it has at `clock`: nothing more will come.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/util/status.h"
#include "stream/protocol/messages.h"

namespace momenta {

struct Batch {
  int64_t clock = 0;
  std::vector<Message> messages;
};

std::string EncodeBatch(int64_t clock, const std::vector<Message>& messages);
// Corruption for a malformed payload or a message stamped after the clock.
Result<Batch> DecodeBatch(std::string_view payload);

struct FinalBatch {
  int64_t last_time = 0;  // <= batch.clock
  Batch batch;
};
std::string EncodeFinal(int64_t last_time, int64_t clock, const std::vector<Message>& messages);
// Corruption for a malformed payload, a last time after the clock, or what DecodeBatch refuses.
Result<FinalBatch> DecodeFinal(std::string_view payload);

}  // namespace momenta
