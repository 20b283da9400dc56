#include "stream/net/wire_batch.h"

#include "stream/window/byte_codec.h"
#include "stream/window/window_spec.h"

namespace momenta {

std::string EncodeBatch(int64_t clock, const std::vector<Message>& messages) {
  ByteWriter out;
  out.Signed(clock);
  out.Varint(messages.size());
  for (const Message& m : messages) {
    const std::string bytes = EncodeMessage(m);
    out.Varint(bytes.size());
    out.Bytes(bytes);
  }
  return out.Take();
}

namespace {

// The BATCH payload from `in`'s position to its end.
Result<Batch> ReadBatch(ByteReader& in) {
  Batch b;
  uint64_t n = 0;
  MOMENTA_RETURN_IF_ERROR(in.Signed(&b.clock));
  if (b.clock < -kMaxTime || b.clock > kMaxTime) return in.Bad("clock out of range");
  MOMENTA_RETURN_IF_ERROR(in.Count(&n, 4));  // a message is at least 3 bytes plus its length
  b.messages.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    std::string_view bytes;
    MOMENTA_RETURN_IF_ERROR(in.Count(&len, 1));
    MOMENTA_RETURN_IF_ERROR(in.Bytes(len, &bytes));
    auto m = DecodeMessage(bytes);
    if (!m.ok()) return m.status();
    if (m->tick > b.clock) return in.Bad("message stamped after the frame's clock");
    b.messages.push_back(std::move(*m));
  }
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return b;
}

}  // namespace

Result<Batch> DecodeBatch(std::string_view payload) {
  ByteReader in(payload, "batch");
  return ReadBatch(in);
}

std::string EncodeFinal(int64_t last_time, int64_t clock, const std::vector<Message>& messages) {
  ByteWriter out;
  out.Signed(last_time);
  return out.Take() + EncodeBatch(clock, messages);
}

Result<FinalBatch> DecodeFinal(std::string_view payload) {
  ByteReader in(payload, "final");
  FinalBatch f;
  MOMENTA_RETURN_IF_ERROR(in.Signed(&f.last_time));
  auto b = ReadBatch(in);
  if (!b.ok()) return b.status();
  if (f.last_time < -kMaxTime || f.last_time > b->clock) return in.Bad("last time after the frame's clock");
  f.batch = std::move(*b);
  return f;
}

}  // namespace momenta
