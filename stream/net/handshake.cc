#include "stream/net/handshake.h"

#include <cmath>
#include <cstdio>

#include "stream/window/byte_codec.h"

namespace momenta {

namespace {

void PutString(ByteWriter* out, std::string_view s) {
  out->Varint(s.size());
  out->Bytes(s);
}

Status GetString(ByteReader* in, std::string* s) {
  uint64_t n = 0;
  MOMENTA_RETURN_IF_ERROR(in->Count(&n, 1));
  if (n > kMaxHandshakeString) return in->Bad("string of " + std::to_string(n) + " bytes");
  std::string_view v;
  MOMENTA_RETURN_IF_ERROR(in->Bytes(n, &v));
  s->assign(v);
  return Status::OK();
}

void PutParams(ByteWriter* out, const MonitorParams& p) {
  out->F64(p.eps);
  out->Signed(p.spec.window);
  out->Signed(p.spec.tardiness);
}

Status GetParams(ByteReader* in, MonitorParams* p) {
  MOMENTA_RETURN_IF_ERROR(in->F64(&p->eps));
  MOMENTA_RETURN_IF_ERROR(in->Signed(&p->spec.window));
  MOMENTA_RETURN_IF_ERROR(in->Signed(&p->spec.tardiness));
  if (!CheckEps(p->eps, "").ok() || !ValidateWindowSpec(p->spec).ok()) return in->Bad("parameters out of range");
  return Status::OK();
}

}  // namespace

std::string MonitorParams::ToString() const {
  char buf[128];
  std::snprintf(buf, sizeof buf, "eps=%g W=%lld tau=%lld", eps, static_cast<long long>(spec.window),
                static_cast<long long>(spec.tardiness));
  return buf;
}

std::string EncodeHello(const Hello& h) {
  ByteWriter out;
  out.Varint(h.version);
  PutString(&out, h.name);
  PutString(&out, h.token);
  out.U8(h.params ? 1 : 0);
  if (h.params) PutParams(&out, *h.params);
  return out.Take();
}

Result<Hello> DecodeHello(std::string_view payload) {
  ByteReader in(payload, "hello");
  Hello h;
  uint64_t version = 0;
  uint8_t has = 0;
  MOMENTA_RETURN_IF_ERROR(in.Varint(&version));
  if (version < kOldestProtocolVersion || version > kProtocolVersion)  // not damage: another program
    return Status::InvalidArgument("hello", "unsupported protocol version " + std::to_string(version) +
                                                " (this root speaks " + std::to_string(kOldestProtocolVersion) + "-" +
                                                std::to_string(kProtocolVersion) + ")");
  h.version = static_cast<uint32_t>(version);
  MOMENTA_RETURN_IF_ERROR(GetString(&in, &h.name));
  MOMENTA_RETURN_IF_ERROR(GetString(&in, &h.token));
  MOMENTA_RETURN_IF_ERROR(in.U8(&has));
  if (has > 1) return in.Bad("bad parameter flag");
  if (has) {
    MonitorParams p;
    MOMENTA_RETURN_IF_ERROR(GetParams(&in, &p));
    h.params = p;
  }
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return h;
}

std::string EncodeWelcome(const Welcome& w) {
  ByteWriter out;
  PutParams(&out, w.params);
  out.Varint(w.slot);
  out.U64(w.root_id);
  return out.Take();
}

Result<Welcome> DecodeWelcome(std::string_view payload) {
  ByteReader in(payload, "welcome");
  Welcome w;
  uint64_t slot = 0;
  MOMENTA_RETURN_IF_ERROR(GetParams(&in, &w.params));
  MOMENTA_RETURN_IF_ERROR(in.Varint(&slot));
  if (slot > UINT32_MAX) return in.Bad("slot out of range");
  w.slot = static_cast<uint32_t>(slot);
  MOMENTA_RETURN_IF_ERROR(in.U64(&w.root_id));
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return w;
}

std::string EncodeReject(std::string_view reason, bool final) {
  ByteWriter out;
  PutString(&out, reason.substr(0, kMaxHandshakeString));
  out.U8(final ? 1 : 0);
  return out.Take();
}

Result<Refusal> DecodeReject(std::string_view payload) {
  ByteReader in(payload, "reject");
  Refusal r;
  uint8_t final = 0;
  MOMENTA_RETURN_IF_ERROR(GetString(&in, &r.reason));
  MOMENTA_RETURN_IF_ERROR(in.U8(&final));
  if (final > 1) return in.Bad("bad final flag");
  r.final = final == 1;
  MOMENTA_RETURN_IF_ERROR(in.Finish());
  return r;
}

std::string EscapeForLog(std::string_view text, size_t max_chars) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Status CheckSiteName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxSiteName;
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                c == '-');
  if (ok) return Status::OK();
  // The name came from the network: never copied raw into a message (a
  // newline would forge a log line).
  std::string what(1, '\'');
  what.append(EscapeForLog(name, kMaxSiteName));
  what.append("' (").append(std::to_string(name.size())).append(" bytes): ").append(kSiteNameRule);
  return Status::InvalidArgument("site name", what);
}

bool TokenMatches(std::string_view presented, std::string_view expected) {
  unsigned diff = presented.size() != expected.size();
  for (size_t i = 0; i < presented.size(); ++i)
    diff |= static_cast<unsigned char>(presented[i]) ^
            static_cast<unsigned char>(expected.empty() ? 0 : expected[i % expected.size()]);
  return diff == 0;
}

}  // namespace momenta
