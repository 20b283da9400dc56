#include "storage/log/log_sync.h"

namespace momenta {

std::string_view LogSyncName(LogSync sync) {
  switch (sync) {
    case LogSync::kAlways:
      return "always";
    case LogSync::kBatch:
      return "batch";
    case LogSync::kNone:
      return "none";
  }
  return "?";
}

Result<LogSync> ParseLogSync(std::string_view text, const std::string& what) {
  for (LogSync s : {LogSync::kAlways, LogSync::kBatch, LogSync::kNone})
    if (text == LogSyncName(s)) return s;
  std::string msg = "'";  // (built by append: GCC 12 warns falsely on operator+ here)
  msg.append(text).append("' is not one of always, batch, none");
  return Status::InvalidArgument(what, msg);
}

}  // namespace momenta
