// The handshake of a site connection, as frame payloads (wire_frame.h).
//
//   site -> root  HELLO    varint version | string name | string token |
//                          u8 has_params [| f64 eps | zig-zag W | zig-zag tau]
//   root -> site  WELCOME  f64 eps | zig-zag W | zig-zag tau | varint slot | u64 root id
//   root -> site  REJECT   string reason | u8 final (the root closes the connection)
//                          final 1: retrying cannot help (the token, the name,
//                          the parameters, the protocol version, no room for
//                          another site); 0: what this connection carried was
//                          bad (a damaged frame): a new connection may succeed
// A string is a varint length and its bytes (at most 256).
//
// The root owns the parameters: a new site takes them from WELCOME. A site
// that already holds state (it reconnects) sends the parameters it runs, and
// the root refuses it when they differ from its own. The token, when the
// root has one, must match exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/util/status.h"
#include "stream/window/window_spec.h"

namespace momenta {

// The HELLO's version says what the site may send. 2: SNAPSHOT and BATCH;
// 3: also FINAL (wire_batch.h: its input ended); 4: also NAMES
// (name_frames.h: the names of items counted by hash). The frames' own
// layout is version 2 for all (wire_frame.h kWireVersion). A root takes
// sites of every version from kOldestProtocolVersion up. A site says 4 only
// when it counts names (a root of protocol 3 refuses it, saying which
// versions it speaks), else 3, so it still reports to a root of protocol 3.
inline constexpr uint32_t kProtocolVersion = 4;
inline constexpr uint32_t kUnnamedProtocolVersion = 3;
inline constexpr uint32_t kOldestProtocolVersion = 2;
inline constexpr size_t kMaxHandshakeString = 256;

// What the root hands every site: the eps the root answers within and the window.
struct MonitorParams {
  double eps = 0.1;
  WindowSpec spec;
  bool operator==(const MonitorParams&) const = default;
  std::string ToString() const;  // "eps=0.01 W=60000 tau=0"
};

struct Hello {
  uint32_t version = kProtocolVersion;
  std::string name;
  std::string token;
  std::optional<MonitorParams> params;  // set when the site already runs
};

struct Welcome {
  MonitorParams params;
  uint32_t slot = 0;     // the root's index for this site (until the root restarts)
  uint64_t root_id = 0;  // changes when the root restarts
};

std::string EncodeHello(const Hello& h);
std::string EncodeWelcome(const Welcome& w);
struct Refusal {
  std::string reason;
  bool final = true;
};

std::string EncodeReject(std::string_view reason, bool final);
// Corruption for anything the encoders could not have produced;
// DecodeHello: InvalidArgument for another protocol version.
Result<Hello> DecodeHello(std::string_view payload);
Result<Welcome> DecodeWelcome(std::string_view payload);
Result<Refusal> DecodeReject(std::string_view payload);

// Site names: 1-64 characters of [A-Za-z0-9._-]. The root checks the name
// of every HELLO (after the token) and refuses others; sites check their own
// before connecting. InvalidArgument otherwise, its message showing the name
// escaped (EscapeForLog), never raw.
inline constexpr size_t kMaxSiteName = 64;
inline constexpr const char* kSiteNameRule = "a site name is 1-64 letters, digits, '.', '_' or '-'";
Status CheckSiteName(std::string_view name);
// `text` with every byte outside printable ASCII as \xNN (and '\\', '\''
// escaped), cut after `max_chars` characters with "...": safe in one log line.
std::string EscapeForLog(std::string_view text, size_t max_chars);
// Equal-time comparison of a presented token with the expected one.
bool TokenMatches(std::string_view presented, std::string_view expected);

}  // namespace momenta
