// The update log's sync policy: when an appended record reaches the disk
// (always: before Append returns; batch: at Commit; none: when the kernel
// writes it back). Apart from log_writer.h so the facade (buffers/
// buffered_array.h) can name it without the writer.
#pragma once

#include <string>
#include <string_view>

#include "storage/util/status.h"

namespace momenta {

enum class LogSync { kAlways, kBatch, kNone };
std::string_view LogSyncName(LogSync sync);  // "always" | "batch" | "none"
// The policy LogSyncName gives `text`; else InvalidArgument naming `what`, the
// caller's word for where the text came from (a CLI says "--sync").
Result<LogSync> ParseLogSync(std::string_view text, const std::string& what);

}  // namespace momenta
