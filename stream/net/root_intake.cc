#include "stream/net/root_intake.h"

#include <utility>

#include "stream/net/name_frames.h"
#include "stream/net/wire_batch.h"

namespace momenta {

std::string AdmitHello(const Frame& f, const MonitorParams& params, std::string_view token, Hello* hello, bool* final) {
  *final = false;
  if (f.type != FrameType::kHello) return "expected HELLO, got frame type " + std::to_string(static_cast<int>(f.type));
  auto decoded = DecodeHello(f.payload);
  if (!decoded.ok()) {
    *final = decoded.status().code() == Status::Code::kInvalidArgument;  // e.g. another protocol version
    return decoded.status().ToString();
  }
  *final = true;  // every refusal below is the same on a retry
  if (!token.empty() && !TokenMatches(decoded->token, token)) return "wrong token";
  if (Status st = CheckSiteName(decoded->name); !st.ok()) return st.ToString();
  if (decoded->params && !(*decoded->params == params))
    return "site '" + decoded->name + "' runs " + decoded->params->ToString() + ", this root " + params.ToString() +
           " (restart the site to take the root's)";
  *hello = std::move(*decoded);
  return "";
}

std::string TakeSiteFrame(RootState& state, uint32_t slot, bool* synced, const Frame& f, uint64_t frame_bytes) {
  if (f.type == FrameType::kNames) {  // before the frame that turns the items on
    auto names = DecodeNames(f.payload);
    if (!names.ok()) return names.status().ToString();
    if (Status st =
            state.names().Note(slot, state.slots()[slot].connects, *names, SiteMirror::MaxEntries(state.params().eps));
        !st.ok())
      return st.ToString();
    state.CountFrame(slot, frame_bytes);
    return "";
  }
  if (f.type != FrameType::kSnapshot && f.type != FrameType::kBatch && f.type != FrameType::kFinal)
    return "unexpected frame type " + std::to_string(static_cast<int>(f.type)) + " after the handshake";
  if (f.type != FrameType::kSnapshot && !*synced)
    return std::string(f.type == FrameType::kBatch ? "BATCH" : "FINAL") + " before SNAPSHOT";
  Status st;
  if (f.type == FrameType::kFinal) {
    auto fin = DecodeFinal(f.payload);
    if (!fin.ok()) return fin.status().ToString();
    st = state.ApplyFinal(slot, std::move(*fin), frame_bytes);
  } else {
    auto batch = DecodeBatch(f.payload);
    if (!batch.ok()) return batch.status().ToString();
    st = f.type == FrameType::kSnapshot ? state.ApplySnapshot(slot, std::move(*batch), frame_bytes)
                                        : state.ApplyBatch(slot, std::move(*batch), frame_bytes);
  }
  if (!st.ok()) return st.ToString();
  *synced = true;
  state.names().Settled(slot, state);
  return "";
}

}  // namespace momenta
