// Encoding of a BucketWindow's clock and buckets, shared by the synopses'
// Encode/Decode. Layout (varints unless noted):
//
//   now (zig-zag) | settled count | settled buckets | unsettled count | unsettled buckets
//   bucket: min_ts (zig-zag) | max_ts - min_ts | n | err (f64) | payload (the synopsis's)
//
// Decoding checks every count against the bytes left and hands the result to
// BucketWindow::Restore, which refuses any state that breaks its invariants.
//
// Every synopsis encoding starts with the same header:
//   magic | window (zig-zag) | tardiness (zig-zag) | eps (f64) | dropped
// and a payload of (key, count) pairs with strictly ascending keys is
//   size | first key (zig-zag) | count | then per pair: key gap | count
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stream/window/bucket_window.h"
#include "stream/window/byte_codec.h"
#include "stream/window/key_count_sort.h"
#include "stream/window/window_spec.h"

namespace momenta {

template <class Payload, class EncodePayload>
void EncodeBuckets(const BucketWindow<Payload>& w, ByteWriter& out, EncodePayload&& encode) {
  out.Signed(w.now());
  auto put = [&](const typename BucketWindow<Payload>::List& list) {
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
  auto get = [&](typename BucketWindow<Payload>::List* list) -> Status {
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
  typename BucketWindow<Payload>::List settled, unsettled;
  MOMENTA_RETURN_IF_ERROR(get(&settled));
  MOMENTA_RETURN_IF_ERROR(get(&unsettled));
  if (!w.Restore(now, std::move(settled), std::move(unsettled))) return in.Bad("buckets break the window's invariants");
  return Status::OK();
}

struct SynopsisHeader {
  WindowSpec spec;
  double eps = 0;
  uint64_t dropped = 0;
};

inline void EncodeSynopsisHeader(std::string_view magic, const SynopsisHeader& h, ByteWriter& out) {
  out.Bytes(magic);
  out.Signed(h.spec.window);
  out.Signed(h.spec.tardiness);
  out.F64(h.eps);
  out.Varint(h.dropped);
}

// Corruption for another magic, or parameters no synopsis accepts.
inline Result<SynopsisHeader> DecodeSynopsisHeader(std::string_view magic, ByteReader& in) {
  SynopsisHeader h;
  MOMENTA_RETURN_IF_ERROR(in.Expect(magic));
  MOMENTA_RETURN_IF_ERROR(in.Signed(&h.spec.window));
  MOMENTA_RETURN_IF_ERROR(in.Signed(&h.spec.tardiness));
  MOMENTA_RETURN_IF_ERROR(in.F64(&h.eps));
  MOMENTA_RETURN_IF_ERROR(in.Varint(&h.dropped));
  if (!ValidateWindowSpec(h.spec).ok() || !CheckEps(h.eps, "").ok()) return in.Bad("bad parameters");
  return h;
}

// Entry: a struct with an int64_t key and a uint32_t count (members named by
// `key` and `count`), `e` ascending by key.
template <class Entry>
void EncodeAscendingPairs(const std::vector<Entry>& e, int64_t Entry::*key, uint32_t Entry::*count, ByteWriter& out) {
  out.Varint(e.size());
  int64_t prev = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    const int64_t k = LoadField(e[i], key);
    // The first as is, then gaps (wrapping arithmetic).
    out.Varint(i == 0 ? ZigZag(k) : static_cast<uint64_t>(k) - static_cast<uint64_t>(prev));
    out.Varint(LoadField(e[i], count));
    prev = k;
  }
}

// Reads what EncodeAscendingPairs wrote into *e and the counts' sum into
// *sum. Corruption for more than max_size pairs (`too_many` says why), keys
// out of order, or a count of 0 or above kMaxBucketItems. `keys` and
// `counts` name them in messages ("items", "count").
template <class Entry>
Status DecodeAscendingPairs(ByteReader& in, uint64_t max_size, const char* too_many, int64_t Entry::*key,
                            uint32_t Entry::*count, const char* keys, const char* counts, std::vector<Entry>* e,
                            uint64_t* sum) {
  uint64_t size = 0;
  MOMENTA_RETURN_IF_ERROR(in.Count(&size, 2));
  if (size > max_size) return in.Bad(too_many);
  e->resize(size);
  *sum = 0;
  int64_t prev = 0;
  for (uint64_t i = 0; i < size; ++i) {
    uint64_t gap = 0, c = 0;
    MOMENTA_RETURN_IF_ERROR(in.Varint(&gap));
    MOMENTA_RETURN_IF_ERROR(in.Varint(&c));
    if (i > 0 && gap == 0) return in.Bad(std::string(keys) + " out of order");
    const int64_t k = i == 0 ? UnZigZag(gap) : static_cast<int64_t>(static_cast<uint64_t>(prev) + gap);
    if (i > 0 && k <= prev) return in.Bad(std::string(keys) + " out of order");
    if (c == 0 || c > kMaxBucketItems) return in.Bad(std::string("bad ") + counts);
    *sum += c;
    StoreField((*e)[i], key, k);  // (packed entries: key_count_sort.h)
    StoreField((*e)[i], count, static_cast<uint32_t>(c));
    prev = k;
  }
  return Status::OK();
}

}  // namespace momenta
