// What the root does with the frames a site sends, with no sockets: the
// handshake's checks (HELLO) and the state's updates (SNAPSHOT, BATCH, FINAL).
// RootServer calls these for every frame of a site connection; the fuzz
// target `wire` drives them with arbitrary bytes.
//
// Each returns the reason the root refuses the frame -- sent back in a
// REJECT, then the connection closes -- or an empty string when it takes it
// (the convention of a validator: the reason is all the caller needs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stream/net/handshake.h"
#include "stream/net/root_state.h"
#include "stream/net/wire_frame.h"

namespace momenta {

// The first frame of a site connection. Taken when it is a HELLO that
// decodes, presents `token` (any, when `token` is empty), names the site by
// CheckSiteName's rule and, for a site that already runs, runs `params`;
// then *hello holds it. The caller attaches the site and sends WELCOME.
// On a refusal, *final says whether retrying cannot help (REJECT's flag): a
// wrong token, name, version or parameters are final; a frame damaged on the
// way (not a HELLO, or one that does not decode for want of bytes) is not.
std::string AdmitHello(const Frame& f, const MonitorParams& params, std::string_view token, Hello* hello, bool* final);

// A frame after the WELCOME on a connection feeding `slot`: a SNAPSHOT, or a
// BATCH or FINAL once a SNAPSHOT came (*synced, set here by the first SNAPSHOT),
// or NAMES (at any time: RootState::names()).
// Taken when its payload decodes and the state accepts it (root_state.h);
// `frame_bytes` is the whole frame's size, for the slot's wire counts.
std::string TakeSiteFrame(RootState& state, uint32_t slot, bool* synced, const Frame& f, uint64_t frame_bytes);

}  // namespace momenta
