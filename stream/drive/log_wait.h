// Waiting for an array's update log to appear. A monitor is started before
// its data (a site beside `momenta update PATH --follow` on a fresh array, a
// daemon at boot): it waits for the array file and its log folder instead of
// failing, says so once, and then follows the log from its first record.
#pragma once

#include <string>

#include "storage/util/status.h"
#include "storage/util/stop_token.h"
#include "stream/drive/item_source.h"

namespace momenta {

// The log folder of the array at `array_path` (SidecarPath(array_path,
// sidecar) + "/log") once it exists, looked for every `poll_ms`. Without an
// explicit `sidecar` the array file is waited for first (where its sidecar is
// depends on the file: links are resolved). While waiting it tells `notice`
// once what it waits for. Interrupted when `stop` comes first (seen at once
// when the token has a descriptor, else within poll_ms).
// REQUIRES: poll_ms >= 1
Result<std::string> WaitForLogDir(const std::string& array_path, const std::string& sidecar, StopToken stop,
                                  const NoticeFn& notice, int poll_ms = 100);

}  // namespace momenta
