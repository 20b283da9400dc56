#include "stream/window/window_count.h"

#include "stream/window/bucket_codec.h"
#include "stream/window/byte_codec.h"

namespace momenta {

namespace {
constexpr char kMagic[] = "MWCNT1";  // window count, encoding v1
}

Result<WindowCount> WindowCount::Create(const WindowSpec& spec, double eps) {
  MOMENTA_RETURN_IF_ERROR(ValidateWindowSpec(spec));
  MOMENTA_RETURN_IF_ERROR(CheckEps(eps, "window count"));
  return WindowCount(spec, eps);
}

void WindowCount::AdvanceTo(int64_t t) {
  Hooks h;
  w_.AdvanceTo(t, h);
}

bool WindowCount::Update(int64_t ts, uint64_t count) {
  if (ts > w_.now()) AdvanceTo(ts);
  if (!AcceptsArrival(w_.spec(), w_.now(), ts)) {
    dropped_ += count;
    return false;
  }
  Hooks h;
  w_.Insert(ts, count, h);
  return true;
}

std::string WindowCount::Encode() const {
  ByteWriter out;
  EncodeSynopsisHeader(kMagic, {spec(), eps_, dropped_}, out);
  EncodeBuckets(w_, out, [](const NoPayload&, ByteWriter&) {});
  return out.Take();
}

Result<WindowCount> WindowCount::Decode(std::string_view bytes) {
  ByteReader in(bytes, "window count");
  auto header = DecodeSynopsisHeader(kMagic, in);
  if (!header.ok()) return header.status();
  WindowCount c(header->spec, header->eps);
  c.dropped_ = header->dropped;
  MOMENTA_RETURN_IF_ERROR(DecodeBuckets(c.w_, in, [](WindowBucket<NoPayload>& b, ByteReader& r) -> Status {
    if (b.err != 0) return r.Bad("count buckets carry no error");
    return Status::OK();
  }));
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return c;
}

}  // namespace momenta
