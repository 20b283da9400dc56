// Encoding of a BucketWindow's clock and buckets, shared by the synopses'
// Encode/Decode. Layout (varints unless noted):
//
//   now (zig-zag) | settled count | settled buckets | unsettled count | unsettled buckets
//   bucket: min_ts (zig-zag) | max_ts - min_ts | n | err (f64) | payload (the synopsis's)
//
// Decoding checks every count against the bytes left and hands the result to
// BucketWindow::Restore, which refuses any state that breaks its invariants.
#pragma once

#include <deque>
#include <string>

#include "stream/bucket_window.h"
#include "stream/byte_codec.h"

namespace momenta {

template <class Payload, class EncodePayload>
void EncodeBuckets(const BucketWindow<Payload>& w, ByteWriter& out, EncodePayload&& encode) {
  out.Signed(w.now());
  auto put = [&](const std::deque<WindowBucket<Payload>>& list) {
    out.Varint(list.size());
    for (const auto& b : list) {
      out.Signed(b.min_ts);
      out.Varint(static_cast<uint64_t>(b.max_ts - b.min_ts));
      out.Varint(b.n);
      out.F64(b.err);
      encode(b.payload, out);
    }
  };
  put(w.settled());
  put(w.unsettled());
}

// decode(Bucket&, ByteReader&) -> Status fills the payload (b.n is set).
template <class Payload, class DecodePayload>
Status DecodeBuckets(BucketWindow<Payload>& w, ByteReader& in, DecodePayload&& decode) {
  int64_t now = 0;
  MOMENTA_RETURN_IF_ERROR(in.Signed(&now));
  auto get = [&](std::deque<WindowBucket<Payload>>* list) -> Status {
    uint64_t count = 0;
    // A bucket takes at least 11 bytes: three one-byte varints and the f64.
    MOMENTA_RETURN_IF_ERROR(in.Count(&count, 11));
    for (uint64_t i = 0; i < count; ++i) {
      WindowBucket<Payload> b;
      uint64_t span = 0;
      MOMENTA_RETURN_IF_ERROR(in.Signed(&b.min_ts));
      MOMENTA_RETURN_IF_ERROR(in.Varint(&span));
      if (b.min_ts < -kMaxTime || b.min_ts > kMaxTime || span > static_cast<uint64_t>(2 * kMaxTime))
        return in.Bad("bucket time out of range");
      b.max_ts = b.min_ts + static_cast<int64_t>(span);
      if (b.max_ts > kMaxTime) return in.Bad("bucket time out of range");
      MOMENTA_RETURN_IF_ERROR(in.Varint(&b.n));
      if (b.n == 0 || b.n > kMaxBucketItems) return in.Bad("bucket size out of range");
      MOMENTA_RETURN_IF_ERROR(in.F64(&b.err));
      MOMENTA_RETURN_IF_ERROR(decode(b, in));
      list->push_back(std::move(b));
    }
    return Status::OK();
  };
  std::deque<WindowBucket<Payload>> settled, unsettled;
  MOMENTA_RETURN_IF_ERROR(get(&settled));
  MOMENTA_RETURN_IF_ERROR(get(&unsettled));
  if (!w.Restore(now, std::move(settled), std::move(unsettled)))
    return in.Bad("buckets break the window's invariants");
  return Status::OK();
}

}  // namespace momenta
